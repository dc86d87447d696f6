package dev.crossbar.server.http;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.InvalidRouteException;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.http.HandshakeFailures.Reason;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.Set;

/**
 * HTTP ingest's way in: a {@code POST} or {@code PUT} on {@code /in/<stream>} (a camera running
 * {@code ffmpeg ... -f mpegts http://relay/in/cam}) is taken off the WebSocket path here, before the
 * aggregator, whose 16 KiB would end a body that is a live stream. The request is checked as the
 * upgrade gate checks a publisher (connection limits, a draining node, path, origin, topic limit; a
 * 1:1 session stream takes WebSockets only, 405), then the rest of the pipeline is replaced by the ingest's own
 * handlers ({@link IngestTail}), which get the request and then its body piece by piece.
 *
 * <p>Every other request passes untouched; once a WebSocket upgrade has passed, this handler
 * leaves the pipeline (frames never come through here). An ingest is a connection's last request:
 * its answer closes the connection.
 *
 * <p>Ownership: passes on what it does not take. A diverted request goes on to the ingest handlers
 * with its body. A refused request (which holds no buffer) is answered and closes the connection;
 * the body that still arrives before the close is released here.
 */
public final class IngestGate extends ChannelInboundHandlerAdapter {

    private static final String INGEST_PREFIX = "/in/";

    private final RouteParser routes;
    private final HandshakeFailures failures;
    private final boolean trustForwardedFor;
    private final Set<String> allowedOrigins;
    private final TopicRegistry topics;
    private final Draining draining;
    private final IngestTail tail;
    /** A request was refused: what follows on this connection is released unread. */
    private boolean refused;

    /**
     * @param trustForwardedFor take the poster's address from {@code X-Forwarded-For}
     * @param allowedOrigins browser origins that may post; empty allows any
     * @param draining whether the node is draining before a restart (new ingests refused, 503)
     * @param tail fits the handlers that take an admitted request and its body
     */
    public IngestGate(RouteParser routes, HandshakeFailures failures, boolean trustForwardedFor,
                      Set<String> allowedOrigins, TopicRegistry topics, Draining draining, IngestTail tail) {
        this.routes = requireNonNull(routes, "routes");
        this.failures = requireNonNull(failures, "failures");
        this.trustForwardedFor = trustForwardedFor;
        this.allowedOrigins = Set.copyOf(allowedOrigins);
        this.topics = requireNonNull(topics, "topics");
        this.draining = requireNonNull(draining, "draining");
        this.tail = requireNonNull(tail, "tail");
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request) {
            String path = ingestPath(request);
            if (path != null) {
                divert(ctx, request, path);
                return;
            }
            if (UpgradeGate.isWebSocketUpgrade(request)) {
                ctx.pipeline().remove(this);
            }
        }
        ctx.fireChannelRead(msg);
    }

    /**
     * The decoded path of an ingest request: {@code POST} or {@code PUT}, well formed, on a path that
     * normalises into {@code /in/...}; null for any other request. A path that cannot be decoded is
     * left to the upgrade gate, which answers every malformed request alike.
     */
    static String ingestPath(HttpRequest request) {
        if (!HttpMethod.POST.equals(request.method()) && !HttpMethod.PUT.equals(request.method())
                || request.decoderResult().isFailure()) {
            return null;
        }
        String path;
        try {
            path = new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException e) {
            return null;
        }
        int i = 0;
        while (i < path.length() && path.charAt(i) == '/') {
            i++;
        }
        return path.startsWith("in/", i) ? path : null;
    }

    private void divert(ChannelHandlerContext ctx, HttpRequest request, String path) {
        Refused limit = ctx.channel().hasAttr(Refused.KEY) ? ctx.channel().attr(Refused.KEY).get() : null;
        if (limit != null) {
            Audit.event("refused").address(RealAddress.of(ctx.channel())).code(limit.status().code())
                    .reason(limit.text()).log();
            refuse(ctx, request, limit.status(), limit.reason(), limit.text());
            return;
        }
        if (draining.isDraining()) {
            refuse(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, Reason.DRAINING,
                    "this relay is draining before a restart; post to another node");
            return;
        }
        Route route;
        try {
            route = routes.parse(path);
        } catch (InvalidRouteException e) {
            refuse(ctx, request, HttpResponseStatus.BAD_REQUEST, Reason.BAD_ROUTE, e.getMessage());
            return;
        }
        if (!route.path().startsWith(INGEST_PREFIX)) {
            // "/in/" alone, or a path only a slash away from it: not a stream.
            refuse(ctx, request, HttpResponseStatus.BAD_REQUEST, Reason.BAD_ROUTE, "no stream name after /in/");
            return;
        }
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin != null && !allowedOrigins.isEmpty() && !allowedOrigins.contains(origin)) {
            refuse(ctx, request, HttpResponseStatus.FORBIDDEN, Reason.ORIGIN_NOT_ALLOWED, "origin not allowed: " + origin);
            return;
        }
        if (topics.routing().hasSessions() && topics.routing().resolve(route.topic()).session()) {
            refuse(ctx, request, HttpResponseStatus.METHOD_NOT_ALLOWED, Reason.METHOD_NOT_ALLOWED, route.path()
                    + " is a 1:1 session stream: its host connects with a WebSocket (GET), not a request body",
                    new DefaultHttpHeaders().set(HttpHeaderNames.ALLOW, HttpMethod.GET.name()));
            return;
        }
        if (!topics.admits(route.topic())) {
            refuse(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, Reason.TOPIC_LIMIT,
                    "topic limit reached (" + topics.maxTopics() + " live topics); try again later");
            return;
        }
        ctx.channel().attr(ClientInfo.KEY).set(new ClientInfo(route,
                UpgradeGate.clientAddress(ctx, request, trustForwardedFor), UpgradeGate.userAgent(request)));
        ChannelPipeline p = ctx.pipeline();
        // What follows was assembled for a WebSocket; this connection will never be one.
        List<String> names = p.names();
        for (String name : names.subList(names.indexOf(ctx.name()) + 1, names.size())) {
            if (p.context(name) != null) {
                p.remove(name);
            }
        }
        tail.fit(p);
        p.remove(this);
        ctx.fireChannelRead(request);
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, HttpResponseStatus status, Reason reason,
                        String text) {
        refuse(ctx, request, status, reason, text, EmptyHttpHeaders.INSTANCE);
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, HttpResponseStatus status, Reason reason,
                        String text, HttpHeaders headers) {
        failures.record(reason);
        ReferenceCountUtil.release(request);
        refused = true;
        HttpResponses.error(ctx, status, text, headers);
    }
}
