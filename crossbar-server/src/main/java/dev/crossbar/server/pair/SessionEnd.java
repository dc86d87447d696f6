package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.TopicKey;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.audit.ClientAddresses;
import dev.crossbar.server.auth.Permit;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.pair.SessionRegistry.SessionRefused;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.CloseSeen;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One side of a 1:1 session: the client's connection ({@code /out/<t>}) or the host's session
 * connection ({@code /session/<id>}). Each whole message read here is written to the other side's
 * channel as the same frame (type and bytes as they came), and flushed once per read batch.
 *
 * <p>Back-pressure, without dropping a byte: when the other side's channel is over its high water mark
 * (what is queued for it counts at once, even from this thread), this side stops reading, so TCP
 * slows the sender; the other side's writability event resumes it. The other side's memory is then
 * bounded by its high water mark plus what one read batch brought. Until the session is paired this
 * side does not read either; messages already decoded wait here in order.
 *
 * <p>Closing: the first close frame either way on this connection (the client's, or the relay's own,
 * e.g. idle timeout or token expiry; {@link CloseSeen}) ends the session with that code and reason,
 * and the other side is closed with the same; a connection that drops without one ends it with 1001.
 * A side the relay closes reads again, to take the client's answer (see {@link #close}).
 *
 * <p>A frame gathered from many socket reads is copied once into one buffer before it goes on
 * ({@link #flat}); a frame read whole goes on as it is.
 *
 * <p>Threads: each end's state is touched on its own channel's loop; the other side is reached
 * through its channel (thread-safe writes), its config (auto-read) and {@link #attach}/{@link #closeBy},
 * which run on its loop. Ownership: last inbound handler; a data frame is handed to the other side's
 * channel, whose outbound path releases it once written (or refused: {@link ConnectionLifecycle});
 * early frames are released if the session ends before pairing; anything else is released here.
 */
final class SessionEnd extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(SessionEnd.class);

    /** Which side of the session this connection is. */
    enum Side { CLIENT, HOST }

    private final Side side;
    private final SessionRegistry registry;
    private final ChannelGroup group;
    private final TopicKey stream;
    private ChannelHandlerContext ctx;
    private ConnectionLifecycle lifecycle;
    /** The client's from its offer on; the host side's from the claim on. Own loop, after the upgrade. */
    private Session session;
    private volatile SessionEnd peer;
    private final ArrayDeque<WebSocketFrame> early = new ArrayDeque<>();
    private boolean upgraded;
    private boolean flushPeer;
    private boolean closeSeen;
    /**
     * Whole messages and payload bytes this side has handed to the other, for statistics: written on
     * this side's loop only, read by the statistics thread.
     */
    private volatile long forwardedMessages;
    private volatile long forwardedBytes;
    /** A close asked for before the upgrade completed: sent once it has. */
    private WebSocketCloseStatus deferredStatus;
    private String deferredReason;

    private SessionEnd(Side side, SessionRegistry registry, ChannelGroup group, TopicKey stream) {
        this.side = side;
        this.registry = requireNonNull(registry, "registry");
        this.group = requireNonNull(group, "group");
        this.stream = requireNonNull(stream, "stream");
    }

    static SessionEnd client(SessionRegistry registry, ChannelGroup group, TopicKey stream) {
        return new SessionEnd(Side.CLIENT, registry, group, stream);
    }

    static SessionEnd host(SessionRegistry registry, ChannelGroup group, TopicKey stream) {
        return new SessionEnd(Side.HOST, registry, group, stream);
    }

    /** The host side's session, from the claim at the gate (own loop, before the upgrade). */
    void claimed(Session s) {
        this.session = s;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.lifecycle = ConnectionLifecycle.of(ctx.pipeline());
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof HandshakeComplete) {
            upgraded(ctx);
        } else if (evt instanceof CloseSeen seen) {
            closeSeen(seen.status(), seen.reason());
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void upgraded(ChannelHandlerContext ctx) {
        upgraded = true;
        if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
            ctx.pipeline().remove(HandshakeTimeout.class);
        }
        group.add(ctx.channel());
        // Nothing is read until the other side is there; what was already decoded waits in order.
        ctx.channel().config().setAutoRead(false);
        if (deferredStatus != null) {
            close(deferredStatus, deferredReason);
            return;
        }
        if (side == Side.CLIENT) {
            audit("connect").log();
            offer(ctx);
        } else if (session.pair()) {
            SessionEnd client = session.client();
            client.audit("session-opened").field("session", session.id())
                    .field("host", Audit.address(RealAddress.of(ctx.channel()))).log();
            attach(client);
            client.ctx.executor().execute(() -> client.attach(this));
            log.debug("{} opened session {} on {}", ctx.channel(), session.path(), SessionRegistry.name(stream));
        } else {
            // Ended between the claim and now (client gone, open timeout); its own close may follow.
            close(CloseCodes.GOING_AWAY, "the session ended before it opened");
        }
    }

    private void offer(ChannelHandlerContext ctx) {
        try {
            session = registry.offer(stream, this);
        } catch (SessionRefused e) {
            close(CloseCodes.TRY_AGAIN_LATER, e.getMessage());
            return;
        }
        long timeoutMillis = registry.config().openTimeout().toMillis();
        Session s = session;
        s.openTimer(ctx.executor().schedule(() -> s.endUnlessOpen(CloseCodes.TRY_AGAIN_LATER,
                "host did not open the session within " + timeoutMillis + " ms"), timeoutMillis, TimeUnit.MILLISECONDS));
        s.host().offer(s, offeredClient());
    }

    /** Pairs this side with {@code other}: early messages go first, then reading starts. Own loop. */
    private void attach(SessionEnd other) {
        if (!ctx.channel().isActive()) {
            return;
        }
        peer = other;
        WebSocketFrame f;
        while ((f = early.poll()) != null) {
            forward(other, f);
        }
        flushPeer(other);
        ctx.channel().config().setAutoRead(true);
        pauseIfFull(other);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        // After a close frame, whichever way, what the client still sends goes nowhere.
        if (!(msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame) || lifecycle.isClosing()) {
            ReferenceCountUtil.release(msg);
            return;
        }
        SessionEnd other = peer;
        if (other == null) {
            early.add((WebSocketFrame) msg);
        } else {
            forward(other, (WebSocketFrame) msg);
        }
    }

    private void forward(SessionEnd other, WebSocketFrame frame) {
        forwardedMessages++; // one writer (this loop): no lost update
        forwardedBytes += frame.content().readableBytes();
        Channel out = other.ctx.channel();
        out.write(flat(frame), out.voidPromise());
        flushPeer = true;
    }

    /**
     * The frame with its bytes in one buffer. The relay's frame decoder makes one buffer per frame;
     * a frame in pieces (a composite) would pin every piece until the other side has sent it and
     * cost a gathering write of many; one copy, as the relay's fan-out makes, avoids both. Releases
     * {@code frame} when it copies.
     */
    private WebSocketFrame flat(WebSocketFrame frame) {
        ByteBuf content = frame.content();
        if (content.nioBufferCount() <= 1) {
            return frame;
        }
        ByteBuf copy = ctx.alloc().buffer(content.readableBytes());
        copy.writeBytes(content, content.readerIndex(), content.readableBytes());
        WebSocketFrame flat = frame.replace(copy);
        frame.release();
        return flat;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        SessionEnd other = peer;
        if (other != null) {
            flushPeer(other);
            pauseIfFull(other);
        }
        ctx.fireChannelReadComplete();
    }

    private void flushPeer(SessionEnd other) {
        if (flushPeer) {
            flushPeer = false;
            other.ctx.channel().flush();
        }
    }

    /**
     * Stops reading while the other side is over its high water mark. Checked again after stopping:
     * the other side may have drained in between, and its writability event may have come before.
     */
    private void pauseIfFull(SessionEnd other) {
        Channel out = other.ctx.channel();
        if (!out.isWritable()) {
            ctx.channel().config().setAutoRead(false);
            if (out.isWritable()) {
                ctx.channel().config().setAutoRead(true);
            }
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        SessionEnd other = peer;
        if (other != null && ctx.channel().isWritable()) {
            other.resume();
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Whole messages this side has sent the other, for statistics. Any thread. */
    long forwardedMessages() {
        return forwardedMessages;
    }

    /** Payload bytes this side has sent the other, for statistics. Any thread. */
    long forwardedBytes() {
        return forwardedBytes;
    }

    /** This side's reader may go on: the other side drained. Any thread. */
    private void resume() {
        if (peer != null) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** The first close frame on this connection, either way ({@link CloseSeen}). Own loop. */
    private void closeSeen(WebSocketCloseStatus status, String reason) {
        if (closeSeen) {
            return;
        }
        closeSeen = true;
        if (session != null) {
            session.end(this, status, reason);
        }
    }

    /** Closes this side because the session ended; any thread. */
    void closeBy(WebSocketCloseStatus status, String reason) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> closeBy(status, reason));
            return;
        }
        if (!upgraded) {
            if (deferredStatus == null) {
                deferredStatus = status;
                deferredReason = reason;
            }
            return;
        }
        closeSeen = true;
        close(status, reason);
    }

    /**
     * Sends this connection's close frame, and reads again (an unpaired side, or one paused for
     * back-pressure, is not reading): the client's answer must be read to end the connection
     * cleanly, or the close timer would reset it with the answer unread. What else it still sends
     * is dropped ({@link #channelRead}). Own loop.
     */
    private void close(WebSocketCloseStatus status, String reason) {
        lifecycle.close(status, reason);
        ctx.channel().config().setAutoRead(true);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        WebSocketFrame f;
        while ((f = early.poll()) != null) {
            f.release();
        }
        if (session != null) {
            session.end(this, CloseCodes.GOING_AWAY, (side == Side.CLIENT ? "client" : "host") + " went away");
        }
        ctx.fireChannelInactive();
    }

    /**
     * What a host is told of this client: its address (truncated to its network unless the operator
     * allows more, {@code --session-full-client-details}), user agent, and its token's {@code sub}.
     */
    java.util.Map<String, Object> offeredClient() {
        ClientInfo client = ctx.channel().attr(ClientInfo.KEY).get();
        java.util.Map<String, Object> c = new java.util.LinkedHashMap<>();
        String address = client == null ? null : client.remoteAddress();
        c.put("remoteAddr", address == null || registry.config().fullClientDetails() ? address
                : ClientAddresses.truncate(address));
        c.put("userAgent", client == null ? null : client.userAgent());
        Permit permit = ctx.channel().hasAttr(Permit.KEY) ? ctx.channel().attr(Permit.KEY).get() : null;
        if (permit != null && permit.grant().sub() != null) {
            c.put("sub", permit.grant().sub());
        }
        return c;
    }

    /** An audit event about this side's client: address, token, stream and role. Any thread. */
    Audit.Event audit(String type) {
        Audit.Event e = Audit.event(type).field("connection", ctx.channel().id().asShortText())
                .address(RealAddress.of(ctx.channel())).topic(SessionRegistry.name(stream))
                .role(side == Side.CLIENT ? "client" : "host");
        Permit permit = ctx.channel().hasAttr(Permit.KEY) ? ctx.channel().attr(Permit.KEY).get() : null;
        if (permit != null) {
            e.sub(permit.grant().sub()).jti(permit.grant().jti());
        }
        return e;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("{} session connection error: {}", ctx.channel(), cause.toString());
        } else {
            log.warn("{} closing session connection after unexpected error", ctx.channel(), cause);
        }
        ctx.close();
    }
}
