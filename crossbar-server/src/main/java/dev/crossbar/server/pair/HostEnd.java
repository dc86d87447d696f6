package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.auth.Permit;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host's connection on {@code /in/<t>} of a session stream: registers the host when the upgrade
 * completes, tells it of each session offered to it (one JSON text message each, see
 * {@code docs/protocol.md}), and ends all its sessions, waiting or open, when it goes away.
 *
 * <p>Ownership: last inbound handler; a host sends nothing on this connection, and whatever it sends
 * is released here. Offers are written from the client's loop (any thread).
 */
final class HostEnd extends ChannelInboundHandlerAdapter implements SessionHost {

    private static final Logger log = LoggerFactory.getLogger(HostEnd.class);

    private final SessionRegistry registry;
    private final ChannelGroup group;
    private final TopicKey stream;
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    /** Names this host to other nodes, whose clients it may serve. */
    private final String id = SessionPaths.newId();
    /** Whether it was offered a client of another node: its departure is then announced. */
    private volatile boolean servedRemote;
    private ChannelHandlerContext ctx;
    private ConnectionLifecycle lifecycle;
    private volatile boolean registered;
    private volatile boolean gone;

    HostEnd(SessionRegistry registry, ChannelGroup group, TopicKey stream) {
        this.registry = requireNonNull(registry, "registry");
        this.group = requireNonNull(group, "group");
        this.stream = requireNonNull(stream, "stream");
    }

    TopicKey stream() {
        return stream;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.lifecycle = ConnectionLifecycle.of(ctx.pipeline());
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof HandshakeComplete) {
            if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
                ctx.pipeline().remove(HandshakeTimeout.class);
            }
            group.add(ctx.channel());
            registered = true;
            registry.addHost(this);
            Permit permit = ctx.channel().hasAttr(Permit.KEY) ? ctx.channel().attr(Permit.KEY).get() : null;
            Audit.event("connect").field("connection", ctx.channel().id().asShortText())
                    .address(RealAddress.of(ctx.channel())).topic(SessionRegistry.name(stream)).role("host")
                    .sub(permit == null ? null : permit.grant().sub()).jti(permit == null ? null : permit.grant().jti()).log();
            log.debug("{} hosts {}", ctx.channel(), SessionRegistry.name(stream));
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** Whether offers may go to this host now. */
    boolean accepting() {
        return registered && !gone && ctx.channel().isActive() && !lifecycle.isClosing();
    }

    String id() {
        return id;
    }

    /** Tells the host to open {@code session}; any thread. */
    @Override
    public void offer(Session session, Map<String, Object> client) {
        sessions.add(session);
        if (gone) {
            // Raced with the host's departure, which may not have seen this session.
            session.end(null, CloseCodes.GOING_AWAY, "host went away");
            return;
        }
        ctx.channel().writeAndFlush(new TextWebSocketFrame(offerJson(session, client)));
    }

    /**
     * Tells the host of a session for a client on another node ({@link SessionCluster}): {@code offer}
     * has the session's path, the URL to open it at, the stream and the client. Any thread.
     */
    void offerRemote(com.fasterxml.jackson.databind.JsonNode offer) {
        servedRemote = true;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "session");
        m.put("session", offer.path("session").asText());
        m.put("url", offer.path("url").asText());
        m.put("stream", offer.path("stream").asText());
        m.put("client", offer.path("client"));
        try {
            ctx.channel().writeAndFlush(new TextWebSocketFrame(Json.MAPPER.writeValueAsString(m)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("offer is not JSON", e);
        }
    }

    static String offerJson(Session session, Map<String, Object> c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "session");
        m.put("session", session.path());
        m.put("stream", SessionRegistry.name(session.stream()));
        m.put("client", c);
        try {
            return Json.MAPPER.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("offer is not JSON", e);
        }
    }

    @Override
    public void forget(Session session) {
        sessions.remove(session);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        gone = true;
        if (registered) {
            registry.removeHost(this);
        }
        if (servedRemote) {
            registry.announceGone(this);
        }
        for (Session s : sessions) {
            s.end(null, CloseCodes.GOING_AWAY, "host went away");
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("{} host connection error: {}", ctx.channel(), cause.toString());
        ctx.close();
    }
}
