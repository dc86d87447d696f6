package dev.crossbar.server.admin;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.auth.AdminAuthority;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import dev.crossbar.server.http.RealAddress;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code POST /admin/disconnect} with {@code {"topic":"/lab/p3/cam"}}, {@code {"sub":"student-42"}}
 * or {@code {"connection":"1a2b3c4d"}}: closes the matching connections with 1008
 * ({@value Disconnect#REASON}) on this node and, in a cluster, on every other node. Answers 200 with
 * how many closed here; recorded in the audit trail. Unlike a revocation it refuses nothing
 * afterwards: a client may reconnect, if its token still lets it.
 *
 * <p>Ownership: the request is borrowed.
 */
public final class DisconnectEndpoint implements HttpEndpoint {

    public static final String PATH = "/admin/disconnect";
    /** Largest body accepted, in bytes. */
    static final int MAX_BODY_BYTES = 4096;

    private final AdminAuthority authority;
    private final ChannelGroup sessions;
    private final DisconnectBroadcast cluster;

    public DisconnectEndpoint(AdminAuthority authority, ChannelGroup sessions, DisconnectBroadcast cluster) {
        this.authority = requireNonNull(authority, "authority");
        this.sessions = requireNonNull(sessions, "sessions");
        this.cluster = requireNonNull(cluster, "cluster");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!authority.permits(ctx, request)) {
            return;
        }
        if (!HttpMethod.POST.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED,
                    "use POST with {\"topic\":...}, {\"sub\":...} or {\"connection\":...}");
            return;
        }
        if (request.content().readableBytes() > MAX_BODY_BYTES) {
            HttpResponses.error(ctx, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "body over " + MAX_BODY_BYTES + " bytes");
            return;
        }
        Disconnect d;
        try {
            JsonNode body = Json.MAPPER.readTree(request.content().toString(StandardCharsets.UTF_8));
            if (body == null || !body.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            d = new Disconnect(text(body, "topic"), text(body, "sub"), text(body, "connection"));
        } catch (JsonProcessingException | IllegalArgumentException e) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "body: " + e.getMessage()
                    + " (expected: JSON {\"topic\":...}, {\"sub\":...} or {\"connection\":...})");
            return;
        }
        int closed = LiveConnections.close(sessions, d);
        cluster.publish(d);
        Audit.event("admin").field("action", "disconnect").address(RealAddress.of(ctx.channel()))
                .topic(d.topic()).sub(d.sub()).field("target", d.connection()).field("closed", closed).log();
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("topic", d.topic());
        answer.put("sub", d.sub());
        answer.put("connection", d.connection());
        answer.put("closed", closed);
        try {
            HttpResponses.send(ctx, HttpResponseStatus.OK, "application/json", Json.MAPPER.writeValueAsString(answer) + "\n");
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("strings and a number are JSON", e);
        }
    }

    private static String text(JsonNode body, String name) {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual() || n.asText().isEmpty() || n.asText().length() > 256) {
            throw new IllegalArgumentException(name + " is not a string of 1 to 256 characters");
        }
        return n.asText();
    }
}
