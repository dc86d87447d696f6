package dev.crossbar.server.http;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.InvalidRouteException;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.session.ClientInfo;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
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
 * <p>Ownership: releases every request it answers; an accepted upgrade is passed on (with its
 * reference) to the WebSocket handshake handler, and this handler leaves the pipeline, since a
 * connection upgrades at most once.
 */
public final class UpgradeGate extends ChannelInboundHandlerAdapter {

    private final RouteParser routes;
    private final Map<String, HttpEndpoint> endpoints;
    private final Set<String> allowedOrigins;
    private final TopicRegistry topics;

    /**
     * @param allowedOrigins browser origins that may upgrade; empty allows any
     * @param topics consulted so that a connection that would exceed the topic limit is refused here
     */
    public UpgradeGate(RouteParser routes, Map<String, HttpEndpoint> endpoints, Set<String> allowedOrigins,
                       TopicRegistry topics) {
        this.routes = requireNonNull(routes, "routes");
        this.endpoints = requireNonNull(endpoints, "endpoints");
        this.allowedOrigins = Set.copyOf(allowedOrigins);
        this.topics = requireNonNull(topics, "topics");
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
        Refused refused = ctx.channel().attr(Refused.KEY).get();
        if (refused != null) {
            HttpResponses.error(ctx, refused.status(), refused.reason());
            return false;
        }
        DecoderResult result = request.decoderResult();
        if (result.isFailure()) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "malformed request: " + result.cause().getMessage());
            return false;
        }
        String path;
        try {
            path = new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException e) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "malformed path: " + e.getMessage());
            return false;
        }
        HttpEndpoint endpoint = endpoints.get(stripTrailingSlash(path));
        if (endpoint != null) {
            endpoint.handle(ctx, request);
            return false;
        }
        if (!isWebSocketUpgrade(request)) {
            HttpResponses.error(ctx, HttpResponseStatus.UPGRADE_REQUIRED,
                    "this is a WebSocket relay; connect a WebSocket client to ws://<host>" + path);
            return false;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "a WebSocket upgrade must be a GET");
            return false;
        }
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin != null && !allowedOrigins.isEmpty() && !allowedOrigins.contains(origin)) {
            HttpResponses.error(ctx, HttpResponseStatus.FORBIDDEN, "origin not allowed: " + origin);
            return false;
        }
        Route route;
        try {
            route = routes.parse(path);
        } catch (InvalidRouteException e) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            return false;
        }
        if (!topics.admits(route.topic())) {
            HttpResponses.error(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "topic limit reached (" + topics.maxTopics() + " live topics); try again later");
            return false;
        }
        String userAgent = request.headers().get(HttpHeaderNames.USER_AGENT, "");
        ctx.channel().attr(ClientInfo.KEY).set(new ClientInfo(route, remoteAddress(ctx.channel().remoteAddress()), userAgent));
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(request);
        return true;
    }

    static boolean isWebSocketUpgrade(FullHttpRequest request) {
        return request.headers().containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true)
                && request.headers().contains(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
    }

    private static String stripTrailingSlash(String path) {
        return path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
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
