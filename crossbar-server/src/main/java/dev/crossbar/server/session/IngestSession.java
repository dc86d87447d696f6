package dev.crossbar.server.session;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.SendLimits;
import dev.crossbar.core.route.StreamOptions;
import dev.crossbar.core.stats.ClientIdentity;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicLimitException;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.auth.Permit;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.http.HttpResponses;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP ingest request ({@code POST} or {@code PUT} on {@code /in/<stream>}) as the publisher of
 * its stream, exactly where a WebSocket publisher on that path would be: it joins the topic when the
 * request arrives (statistics show it as a publisher, with its address and user agent), publishes
 * the body as binary messages as it arrives ({@link BodyCutter}: whole MPEG-TS packets, or the pieces
 * of any other body), and answers when the body ends: 200 with a JSON summary ({@code messages},
 * {@code bytes}), after which the connection closes.
 *
 * <p>Back-pressure reaches the poster through TCP: the request is not read while the stream's
 * receivers hold it back ({@code slow=backpressure}, {@link #holdReading}) or while an event loop's
 * fan-out backlog is past half its bound; what is not read waits in the socket, and the poster's
 * writes block. At most one message (and part of an MPEG-TS packet) is held here between reads.
 *
 * <p>A poster that sends nothing for the idle timeout while it is being read is answered 408; at
 * shutdown, 503. Refusals before the body (limits, path, token) are the gate's and the access
 * check's; a topic limit lost to a race is answered 503 here.
 *
 * <p>Ownership: this is the last inbound handler and releases everything that reaches it. The
 * body's bytes go to {@link Router#publish} as messages whose references it takes (see
 * {@link BodyCutter}); what the cutter holds is released when the channel closes.
 */
public final class IngestSession extends ChannelInboundHandlerAdapter implements Member {

    private static final Logger log = LoggerFactory.getLogger(IngestSession.class);

    /** How often a poster held for the fan-out backlog looks again; a few milliseconds of video. */
    static final long BACKLOG_RECHECK_MILLIS = 10;
    /** The MPEG-TS media type (RFC 3555): a body declared so is cut at packets from its first byte. */
    static final String MPEG_TS = "video/mp2t";


    /** The answer to a body that ended: what was published on which stream. */
    record Summary(String stream, long messages, long bytes) {
    }

    private final Router router;
    private final ChannelGroup sessions;
    private final int tsMessageBytes;
    private final int maxMessageBytes;
    private final int idleIntervalsBeforeClose;
    private final SendBrakes brakes;
    private final ConnectionStats stats = ConnectionStats.startingNow();

    private ChannelHandlerContext ctx;
    private ClientInfo client;
    private ClientIdentity identity;
    private Permit permit;
    private Topic topic;
    private SendLimits limits;
    /** The poster's rate and bandwidth limits, applied to the messages its body is cut into. */
    private SendBrake brake = SendBrake.NONE;
    /** Whether its stream is {@code slow=backpressure}: a drain lets such an upload finish. */
    private volatile boolean lossless;
    private BodyCutter cutter;
    /** The answer has been written: nothing more is relayed or answered. */
    private boolean answered;
    private boolean streamHeld;
    private boolean backlogHeld;
    private ScheduledFuture<?> backlogRecheck;
    private int idleIntervals;
    private long readAtNanos;
    private boolean readStamped;

    /**
     * @param tsMessageBytes the largest MPEG-TS message ({@code --ingest-message-size})
     * @param maxMessageBytes the relay's message limit: no message is larger
     * @param idleIntervalsBeforeClose reader-idle events in a row, while reading, after which the
     *                                 poster is answered 408
     * @param brakes the stream's send limits, as for a WebSocket publisher
     */
    public IngestSession(Router router, ChannelGroup sessions, int tsMessageBytes, int maxMessageBytes,
                         int idleIntervalsBeforeClose, SendBrakes brakes) {
        this.router = requireNonNull(router, "router");
        this.sessions = requireNonNull(sessions, "sessions");
        this.tsMessageBytes = tsMessageBytes;
        this.maxMessageBytes = maxMessageBytes;
        this.idleIntervalsBeforeClose = Math.max(1, idleIntervalsBeforeClose);
        this.brakes = requireNonNull(brakes, "brakes");
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest request) {
                start(ctx, request);
            }
            if (msg instanceof HttpContent content) {
                body(content);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void start(ChannelHandlerContext ctx, HttpRequest request) {
        if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
            ctx.pipeline().remove(HandshakeTimeout.class);
        }
        client = ctx.channel().attr(ClientInfo.KEY).get();
        if (client == null) {
            // Cannot happen behind the ingest gate; refuse rather than publish to an unknown stream.
            answer(HttpResponseStatus.INTERNAL_SERVER_ERROR, "no route for this request");
            return;
        }
        permit = ctx.channel().hasAttr(Permit.KEY) ? ctx.channel().attr(Permit.KEY).get() : null;
        identity = new ClientIdentity(ctx.channel().id().asShortText(), client.remoteAddress(), client.userAgent(),
                permit == null ? null : permit.grant().sub(), permit == null ? null : permit.grant().jti());
        String type = request.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
        cutter = new BodyCutter(ctx.alloc(), type.toLowerCase(Locale.ROOT).startsWith(MPEG_TS), tsMessageBytes,
                maxMessageBytes);
        StreamOptions options = router.topics().routing().resolve(client.route().topic());
        lossless = options.lossless();
        limits = brakes.limitsFor(options);
        brake = brakes.brakeFor(limits, true, System.nanoTime());
        try {
            topic = router.join(this);
        } catch (TopicLimitException e) {
            answer(HttpResponseStatus.SERVICE_UNAVAILABLE, e.getMessage() + "; try again later");
            return;
        }
        sessions.add(ctx.channel());
        if (HttpUtil.is100ContinueExpected(request)) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE,
                    Unpooled.EMPTY_BUFFER));
        }
        log.debug("{} publishing an HTTP body on {}", ctx.channel(), client.route().path());
        audit("connect").field("ingest", true).log();
    }

    private void body(HttpContent content) {
        if (topic == null || answered) {
            return;
        }
        idleIntervals = 0;
        if (content.decoderResult().isFailure()) {
            answer(HttpResponseStatus.BAD_REQUEST, "malformed body: " + content.decoderResult().cause().getMessage());
            return;
        }
        cutter.add(content.content(), this::publish);
        if (content instanceof LastHttpContent) {
            cutter.end(this::publish);
            finish();
        }
    }

    /**
     * Hands one message to the router, stamped with its read's time; takes the reference. A message
     * over the poster's send limits is dropped and counted, or ends the request (429), as the
     * stream's {@code over} says.
     */
    private void publish(ByteBuf message) {
        if (!readStamped) {
            readAtNanos = System.nanoTime();
            readStamped = true;
        }
        if (answered) {
            message.release(); // the rest of a read that went over the limit
            return;
        }
        if (!brake.admit(message.readableBytes(), readAtNanos)) {
            message.release();
            if (limits.over() == SendLimits.OverLimit.CLOSE) {
                brakes.counts().closed.increment();
                answer(HttpResponseStatus.TOO_MANY_REQUESTS, "over the send limit (" + limits.describe()
                        + "): " + stats.bytesIn() + " bytes of this body were relayed");
            } else {
                brakes.counts().dropped.increment();
            }
            return;
        }
        router.publish(this, topic, false, message, ctx.alloc(), readAtNanos);
    }

    /** An audit event about this request: its address, token and stream filled in. */
    private Audit.Event audit(String type) {
        Audit.Event e = Audit.event(type).field("connection", ctx.channel().id().asShortText())
                .address(RealAddress.of(ctx.channel())).topic(client.route().path()).role(client.route().role().label());
        if (permit != null) {
            e.sub(permit.grant().sub()).jti(permit.grant().jti());
        }
        return e;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (topic != null && !answered) {
            cutter.readComplete(this::publish);
            if (!backlogHeld && router.backlogged()) {
                backlogHeld = true;
                applyReading();
                backlogRecheck = ctx.executor().schedule(this::recheckBacklog, BACKLOG_RECHECK_MILLIS,
                        TimeUnit.MILLISECONDS);
            }
        }
        readStamped = false;
        ctx.fireChannelReadComplete();
    }

    private void recheckBacklog() {
        backlogRecheck = null;
        if (answered || !ctx.channel().isActive()) {
            return;
        }
        if (router.backlogged()) {
            backlogRecheck = ctx.executor().schedule(this::recheckBacklog, BACKLOG_RECHECK_MILLIS, TimeUnit.MILLISECONDS);
        } else {
            backlogHeld = false;
            applyReading();
        }
    }

    /** Reads the body unless the stream's receivers or the fan-out backlog hold it back. */
    private void applyReading() {
        boolean read = !streamHeld && !backlogHeld;
        if (!read) {
            idleIntervals = 0; // a poster waiting for us is not idle
        }
        ctx.channel().config().setAutoRead(read);
    }

    /** The body ended: the summary, and the connection closes. */
    private void finish() {
        long messages = stats.messagesIn();
        long bytes = stats.bytesIn();
        leave();
        String json;
        try {
            json = Json.MAPPER.writeValueAsString(new Summary(client.route().path(), messages, bytes)) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a string and two numbers are JSON", e);
        }
        log.debug("{} HTTP body on {} ended: {} messages, {} bytes", ctx.channel(), client.route().path(), messages, bytes);
        audit("close").code(HttpResponseStatus.OK.code()).reason("the body ended").bytes(bytes, 0).log();
        ByteBuf content = ByteBufUtil.writeUtf8(ctx.alloc(), json);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    /** Ends the request early with {@code status} and a reason; the connection closes. */
    private void answer(HttpResponseStatus status, String reason) {
        if (topic != null) {
            audit("close").code(status.code()).reason(reason).bytes(stats.bytesIn(), 0).log();
        }
        leave();
        HttpResponses.error(ctx, status, reason);
    }

    private void leave() {
        answered = true;
        cancelBacklogRecheck();
        if (topic != null) {
            router.leave(this);
            topic = null;
        }
        if (cutter != null) {
            cutter.release();
        }
    }

    /** Whether its stream is lossless ({@code slow=backpressure}): a drain lets it finish. Any thread. */
    public boolean lossless() {
        return lossless;
    }

    /**
     * The node drains before a restart: a body still coming is answered 503, so the poster posts
     * again, to another node. {@code late}: a lossless upload the drain let run until its deadline,
     * told how much of it was relayed. Any thread.
     */
    public void restarting(boolean late) {
        ctx.executor().execute(() -> {
            if (!answered && ctx.channel().isActive()) {
                answer(HttpResponseStatus.SERVICE_UNAVAILABLE, late
                        ? "relay restarting before this body ended: " + stats.bytesIn() + " bytes of it ("
                                + stats.messagesIn() + " messages) were relayed; send the rest from there"
                        : "relay restarting: post again, to another node if there is one");
            }
        });
    }

    /** An administrator disconnected this poster ({@code /admin/disconnect}): 403 with the reason. Any thread. */
    public void disconnect(String reason) {
        ctx.executor().execute(() -> {
            if (!answered && ctx.channel().isActive()) {
                answer(HttpResponseStatus.FORBIDDEN, reason);
            }
        });
    }

    /** The relay is shutting down: a body still coming is answered 503. Any thread. */
    public void shutDown() {
        ctx.executor().execute(() -> {
            if (!answered && ctx.channel().isActive()) {
                answer(HttpResponseStatus.SERVICE_UNAVAILABLE, "relay shutting down; post again to another node or later");
            }
        });
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (!(evt instanceof IdleStateEvent)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        if (topic != null && !answered && ctx.channel().config().isAutoRead()
                && ++idleIntervals >= idleIntervalsBeforeClose) {
            answer(HttpResponseStatus.REQUEST_TIMEOUT, "no body bytes for " + idleIntervals
                    + " idle intervals (--idle-timeout); the stream ends here");
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!answered && topic != null) {
            log.debug("{} poster went away before its body ended, after {} bytes", ctx.channel(), stats.bytesIn());
            audit("close").reason("connection closed before the body ended").bytes(stats.bytesIn(), 0).log();
        }
        leave();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (cutter != null) {
            cutter.release();
        }
        cancelBacklogRecheck();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("{} connection error: {}", ctx.channel(), cause.toString());
        } else {
            log.warn("{} closing after unexpected error", ctx.channel(), cause);
        }
        ctx.close();
    }

    private void cancelBacklogRecheck() {
        if (backlogRecheck != null) {
            backlogRecheck.cancel(false);
            backlogRecheck = null;
        }
    }

    // ---- Member: called by the router on this channel's event loop ----

    @Override
    public EventExecutor executor() {
        return ctx.executor();
    }

    @Override
    public Route route() {
        return client.route();
    }

    @Override
    public ConnectionStats stats() {
        return stats;
    }

    @Override
    public ClientIdentity client() {
        return identity;
    }

    @Override
    public boolean maySend() {
        return permit == null || permit.maySend();
    }

    /** A 1:N publisher receives nothing; the router never offers it a message. */
    @Override
    public boolean deliver(PreparedFrame frame) {
        return false;
    }

    @Override
    public void holdReading(boolean hold) {
        streamHeld = hold;
        if (!answered && ctx.channel().isActive()) {
            applyReading();
        }
    }

    @Override
    public void flush() {
    }
}
