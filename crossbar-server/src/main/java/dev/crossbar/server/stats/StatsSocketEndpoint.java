package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import dev.crossbar.server.http.UpgradeGate;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import dev.crossbar.server.websocket.ProtocolSwap;
import dev.crossbar.server.websocket.WebSocketProtocol;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.util.function.Function;

/**
 * {@code /ws}: the JSON statistics socket (the original crossbar's path, so its dashboards find it).
 * An upgrade here becomes a stats socket, never a topic member: the relay's WebSocket handlers
 * behind the gate are replaced by a WebSocket protocol handler with a small frame limit and a
 * {@link StatsSession}, and the request goes on to that handshake.
 *
 * <p>Ownership: the request is borrowed from the gate (which releases it); an accepted upgrade is
 * passed on with a reference of its own.
 */
public final class StatsSocketEndpoint implements HttpEndpoint {

    public static final String PATH = "/ws";
    /** Largest message a stats client may send; requests are a word or two ("-" in the original). */
    static final int MAX_REQUEST_BYTES = 4096;
    /** After the handshake, the relay's reader in place of Netty's frame handling, as on every WebSocket. */
    private static final ProtocolSwap PROTOCOL_SWAP = new ProtocolSwap(MAX_REQUEST_BYTES);

    private final StatsService service;
    /** How much of each client the reader of an upgrade request may see (its token, the operator's flag). */
    private final Function<HttpRequest, ClientDetails> details;
    private final WebSocketServerProtocolConfig wsConfig;
    private final int missedPingsBeforeClose;

    public StatsSocketEndpoint(StatsService service, ServerConfig config) {
        this(service, config, r -> config.statsFullClientDetails() ? ClientDetails.FULL : ClientDetails.TRUNCATED);
    }

    /** @param details how much of each client the reader of an upgrade request may see */
    public StatsSocketEndpoint(StatsService service, ServerConfig config, Function<HttpRequest, ClientDetails> details) {
        this.service = requireNonNull(service, "service");
        this.details = requireNonNull(details, "details");
        this.wsConfig = WebSocketProtocol.config(config.subprotocols(), config.handshakeTimeout(), MAX_REQUEST_BYTES);
        this.missedPingsBeforeClose = ConnectionLifecycle.missedPingsBeforeClose(config.pingInterval(), config.idleTimeout());
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!UpgradeGate.isWebSocketUpgrade(request)) {
            HttpResponses.error(ctx, HttpResponseStatus.UPGRADE_REQUIRED,
                    "the statistics socket is a WebSocket; open /stats in a browser for the page");
            return;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "a WebSocket upgrade must be a GET");
            return;
        }
        StatsFormat format;
        StatsScope scope;
        try {
            java.util.Map<String, java.util.List<String>> query = new QueryStringDecoder(request.uri()).parameters();
            format = StatsFormat.of(query.get(StatsFormat.PARAMETER));
            scope = StatsScope.of(query.get(StatsScope.PARAMETER));
            if (scope == StatsScope.CLUSTER && format != StatsFormat.SNAPSHOT) {
                throw new IllegalArgumentException("format: '" + format.label()
                        + "' with scope=cluster (expected: snapshot; the original's client list is per node)");
            }
        } catch (IllegalArgumentException e) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            return;
        }
        ChannelPipeline p = ctx.pipeline();
        // Everything after the gate was assembled for a relay connection; a stats socket needs its own.
        while (p.last() != ctx.handler()) {
            p.removeLast();
        }
        p.addLast("stats-protocol", new WebSocketServerProtocolHandler(wsConfig));
        p.addLast("stats-lifecycle", new ConnectionLifecycle(missedPingsBeforeClose));
        p.addLast("stats-protocol-swap", PROTOCOL_SWAP);
        p.addLast("stats-session", new StatsSession(service, format, scope, details.apply(request)));
        p.remove(ctx.handler());
        ctx.fireChannelRead(request.retain());
    }
}
