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
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.Set;

/**
 * The first look at every HTTP request: reserved paths go to their endpoint; everything else must
 * be a WebSocket upgrade to a valid route, or is refused here with a status and a reason, before
 * any WebSocket exists.
 *
 * <p>Reserved paths are matched after the same normalisation as topics, so {@code //ws/} is the
 * stats socket too and can never become a topic. Every refusal is counted by reason
 * ({@link HandshakeFailures}).
 *
 * <p>Ownership: releases every request it answers; an accepted upgrade is passed on (with its
 * reference) to the WebSocket handshake handler, and this handler leaves the pipeline, since a
 * connection upgrades at most once.
 */
public final class UpgradeGate extends ChannelInboundHandlerAdapter {

    /** Longest user agent kept for statistics; longer ones are cut (a header may be 8 KiB). */
    public static final int MAX_USER_AGENT_CHARS = 256;
    /** Longest forwarded address kept; an IPv6 address is at most 45 characters. */
    static final int MAX_FORWARDED_ADDRESS_CHARS = 64;
    private static final String X_FORWARDED_FOR = "X-Forwarded-For";

    private final RouteParser routes;
    private final Map<String, HttpEndpoint> endpoints;
    private final HandshakeFailures failures;
    private final boolean trustForwardedFor;
    private final Set<String> allowedOrigins;
    private final TopicRegistry topics;
    /** Upgrades that do not join a topic (1:1 sessions); {@link UpgradeAdmission#NONE} if none. */
    private final UpgradeAdmission admission;

    public UpgradeGate(RouteParser routes, Map<String, HttpEndpoint> endpoints) {
        this(routes, endpoints, new HandshakeFailures(), false, Set.of(), null, null);
    }

    public UpgradeGate(RouteParser routes, Map<String, HttpEndpoint> endpoints, HandshakeFailures failures,
                       boolean trustForwardedFor, Set<String> allowedOrigins, TopicRegistry topics) {
        this(routes, endpoints, failures, trustForwardedFor, allowedOrigins, topics, null);
    }

    /**
     * @param routes parses topic paths; null for an address that serves only {@code endpoints}
     *               (the admin address), where every other path is refused with 404
     * @param trustForwardedFor take the client's address from {@code X-Forwarded-For}
     * @param allowedOrigins browser origins that may upgrade; empty allows any
     * @param topics consulted so that a connection that would exceed the topic limit is refused
     *               here; null where {@code routes} is null
     * @param admission takes over the upgrades that do not join a topic (1:1 sessions: their reserved
     *               paths and their streams); null: none here
     */
    public UpgradeGate(RouteParser routes, Map<String, HttpEndpoint> endpoints, HandshakeFailures failures,
                       boolean trustForwardedFor, Set<String> allowedOrigins, TopicRegistry topics,
                       UpgradeAdmission admission) {
        this.routes = routes;
        this.endpoints = requireNonNull(endpoints, "endpoints");
        this.failures = requireNonNull(failures, "failures");
        this.trustForwardedFor = trustForwardedFor;
        this.allowedOrigins = Set.copyOf(allowedOrigins);
        this.topics = topics;
        this.admission = admission == null ? UpgradeAdmission.NONE : admission;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        boolean passedOn = false;
        try {
            passedOn = dispatch(ctx, request);
        } finally {
            if (!passedOn) {
                request.release();
            }
        }
    }

    /** Returns true if the request was passed on to the handshake (and must not be released here). */
    private boolean dispatch(ChannelHandlerContext ctx, FullHttpRequest request) {
        // hasAttr first: attr() would add an empty attribute to every channel that was not refused.
        Refused refused = ctx.channel().hasAttr(Refused.KEY) ? ctx.channel().attr(Refused.KEY).get() : null;
        if (refused != null) {
            failures.record(refused.reason());
            Audit.event("refused").address(RealAddress.of(ctx.channel())).code(refused.status().code())
                    .reason(refused.text()).log();
            HttpResponses.error(ctx, refused.status(), refused.text());
            return false;
        }
        DecoderResult result = request.decoderResult();
        if (result.isFailure()) {
            failures.record(Reason.MALFORMED_REQUEST);
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "malformed request: " + result.cause().getMessage());
            return false;
        }
        String path;
        try {
            path = new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException e) {
            failures.record(Reason.MALFORMED_REQUEST);
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "malformed path: " + e.getMessage());
            return false;
        }
        HttpEndpoint endpoint = endpointFor(path);
        if (endpoint != null) {
            endpoint.handle(ctx, request);
            return false;
        }
        if (routes == null) {
            failures.record(Reason.NOT_FOUND);
            HttpResponses.error(ctx, HttpResponseStatus.NOT_FOUND,
                    "this address serves only " + String.join(", ", endpoints.keySet()));
            return false;
        }
        if (!isWebSocketUpgrade(request)) {
            failures.record(Reason.NOT_UPGRADE);
            HttpResponses.error(ctx, HttpResponseStatus.UPGRADE_REQUIRED,
                    "this is a WebSocket relay; connect a WebSocket client to ws://<host>" + path);
            return false;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            failures.record(Reason.METHOD_NOT_ALLOWED);
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "a WebSocket upgrade must be a GET");
            return false;
        }
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin != null && !allowedOrigins.isEmpty() && !allowedOrigins.contains(origin)) {
            failures.record(Reason.ORIGIN_NOT_ALLOWED);
            HttpResponses.error(ctx, HttpResponseStatus.FORBIDDEN, "origin not allowed: " + origin);
            return false;
        }
        Route route;
        try {
            route = routes.parse(path);
        } catch (InvalidRouteException e) {
            failures.record(Reason.BAD_ROUTE);
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            return false;
        }
        UpgradeAdmission.Admission session = admission.admit(ctx.pipeline(), route);
        if (session != null) {
            if (session.refused() != null) {
                failures.record(session.refused().reason());
                HttpResponses.error(ctx, session.refused().status(), session.refused().text());
                return false;
            }
            route = session.route();
        }
        // Session connections join no topic: the topic limit is not theirs.
        if (session == null && topics != null && !topics.admits(route.topic())) {
            failures.record(Reason.TOPIC_LIMIT);
            HttpResponses.error(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "topic limit reached (" + topics.maxTopics() + " live topics); try again later");
            return false;
        }
        ctx.channel().attr(ClientInfo.KEY).set(new ClientInfo(route, clientAddress(ctx, request, trustForwardedFor), userAgent(request)));
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(request);
        return true;
    }

    /** Whether the request asks for a WebSocket upgrade ({@code Connection: upgrade}, {@code Upgrade: websocket}). */
    public static boolean isWebSocketUpgrade(HttpRequest request) {
        return request.headers().containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true)
                && request.headers().contains(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
    }

    /** The endpoint for {@code path} as sent, or as it would be normalised into a topic. */
    private HttpEndpoint endpointFor(String path) {
        HttpEndpoint endpoint = endpoints.get(path);
        if (endpoint != null) {
            return endpoint;
        }
        try {
            return endpoints.get(RouteParser.normalise(path));
        } catch (InvalidRouteException e) {
            return null;
        }
    }

    /** The user agent for statistics, cut to {@link #MAX_USER_AGENT_CHARS}. */
    static String userAgent(HttpRequest request) {
        String ua = request.headers().get(HttpHeaderNames.USER_AGENT, "");
        return ua.length() > MAX_USER_AGENT_CHARS ? ua.substring(0, MAX_USER_AGENT_CHARS) : ua;
    }

    /**
     * The client's address: as a trusted proxy reported it ({@link RealAddress}), else the socket's
     * peer, or, when the relay trusts any proxy ({@code --trust-forwarded-for}), the last
     * address in {@code X-Forwarded-For}, which is the one that proxy appended (earlier entries
     * are whatever the client claimed).
     */
    static String clientAddress(ChannelHandlerContext ctx, HttpRequest request, boolean trustForwardedFor) {
        if (ctx.channel().hasAttr(RealAddress.KEY) && ctx.channel().attr(RealAddress.KEY).get() != null) {
            return RealAddress.format(ctx.channel().attr(RealAddress.KEY).get()); // from a trusted proxy
        }
        if (trustForwardedFor) {
            String forwarded = lastForwardedFor(request.headers().getAll(X_FORWARDED_FOR));
            if (forwarded != null) {
                return forwarded;
            }
        }
        return remoteAddress(ctx.channel().remoteAddress());
    }

    /** The last non-empty entry over every {@code X-Forwarded-For} header, or null. */
    static String lastForwardedFor(java.util.List<String> headers) {
        for (int h = headers.size() - 1; h >= 0; h--) {
            String[] entries = headers.get(h).split(",");
            for (int i = entries.length - 1; i >= 0; i--) {
                String e = entries[i].trim();
                if (!e.isEmpty()) {
                    return e.length() > MAX_FORWARDED_ADDRESS_CHARS ? e.substring(0, MAX_FORWARDED_ADDRESS_CHARS) : e;
                }
            }
        }
        return null;
    }

    static String remoteAddress(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            return inet.getAddress() != null
                    ? inet.getAddress().getHostAddress() + ":" + inet.getPort()
                    : inet.getHostString() + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }
}
