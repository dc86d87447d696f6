package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import dev.crossbar.server.http.RealAddress;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /admin/revoke} with an admin token and a JSON body {@code {"jti":"..."}} or
 * {@code {"sid":"..."}} (both may be given; {@code "exp"}, in seconds since the epoch, optional):
 * closes every live connection whose token matches (1008 "token revoked") and refuses the token
 * from then on, until it would have expired. Answers 200 with what was done as JSON.
 *
 * <p>The revocation is kept until the latest of: the {@code exp} given, the expiry of the live
 * connections it closed; if neither is known, for the configured revocation TTL. It is then kept
 * where the node keeps revocations ({@link RevocationStore}: in a cluster a JetStream bucket, whose
 * every node closes its own matching connections and refuses the token; alone, a file), before the
 * answer, which names that place ({@code "kept"}); 503 if it could not be kept there (it then holds
 * on this node only, until a restart). Recorded in the audit trail.
 */
public final class RevokeEndpoint implements HttpEndpoint {

    public static final String PATH = "/admin/revoke";

    private static final Logger log = LoggerFactory.getLogger(RevokeEndpoint.class);

    /** Largest body accepted, in bytes. */
    static final int MAX_BODY_BYTES = 4096;
    /** Latest {@code exp} accepted (year 5138): keeps the arithmetic in range. */
    static final long MAX_EXP_SECONDS = 100_000_000_000L;
    /** Longest jti or sid accepted, in characters. */
    static final int MAX_ID_CHARS = 256;

    private final AccessControl access;
    private final ChannelGroup sessions;
    /** Where the store is written: it may block (a disk, NATS), never on an event loop. */
    private final Executor adminThread;

    public RevokeEndpoint(AccessControl access, ChannelGroup sessions, Executor adminThread) {
        this.access = requireNonNull(access, "access");
        this.sessions = requireNonNull(sessions, "sessions");
        this.adminThread = requireNonNull(adminThread, "adminThread");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        try {
            AdminGuard.check(request, access);
        } catch (AccessDenied denied) {
            access.recordRefusal(denied);
            Refusals.send(ctx, denied, true);
            return;
        }
        if (!HttpMethod.POST.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "use POST with {\"jti\":\"...\"} or {\"sid\":\"...\"}");
            return;
        }
        if (request.content().readableBytes() > MAX_BODY_BYTES) {
            HttpResponses.error(ctx, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "body over " + MAX_BODY_BYTES + " bytes");
            return;
        }
        String jti;
        String sid;
        Long exp;
        try {
            JsonNode body = Json.MAPPER.readTree(request.content().toString(StandardCharsets.UTF_8));
            if (body == null || !body.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            jti = id(body, "jti");
            sid = id(body, "sid");
            exp = exp(body);
            if (exp != null && (exp < 0 || exp > MAX_EXP_SECONDS)) {
                throw new IllegalArgumentException("exp " + exp + " out of range (expected: seconds since the epoch)");
            }
        } catch (JsonProcessingException | IllegalArgumentException e) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "body: " + e.getMessage()
                    + " (expected: JSON {\"jti\":\"...\"} or {\"sid\":\"...\"}, optional \"exp\" in seconds)");
            return;
        }
        if (jti == null && sid == null) {
            HttpResponses.error(ctx, HttpResponseStatus.BAD_REQUEST, "body names neither jti nor sid");
            return;
        }
        long now = System.currentTimeMillis();
        long until = exp == null ? 0 : exp * 1000 + access.config().clockSkew().toMillis();
        int matched = 0;
        for (Channel ch : sessions) {
            Permit permit = ch.attr(Permit.KEY).get();
            if (permit != null && permit.grant().matches(jti, sid)) {
                until = Math.max(until, permit.grant().expiresAtMillis());
                matched++;
            }
        }
        if (until <= now) {
            until = now + access.config().revocationTtl().toMillis();
        }
        // Listed first, then swept: a connection joining meanwhile sees the entry at its join check.
        if (!access.revocations().revoke(jti, sid, until, now)) {
            HttpResponses.error(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "revocation list full ("
                    + access.revocations().maxEntries() + " unexpired entries; see --auth-max-revocations)");
            return;
        }
        Revocation revocation = new Revocation(jti, sid, until);
        long keptUntil = until;
        int closed = LiveRevocations.end(sessions, revocation);
        log.info("{} revoked jti={} sid={} until {}; closing {} connection(s) here", ctx.channel(), jti, sid,
                Instant.ofEpochMilli(until), closed);
        // Kept, and passed to the other nodes (which close theirs), before the administrator is answered.
        RevocationStore store = access.store();
        adminThread.execute(() -> {
            String notKept = null;
            try {
                store.save(revocation);
            } catch (IOException | RuntimeException e) {
                notKept = e.getMessage();
                log.warn("Revocation of jti={} sid={} holds on this node only, not kept in {}: {}", jti, sid,
                        store.describe(), notKept);
            }
            Audit.event("admin").field("action", "revoke").address(RealAddress.of(ctx.channel()))
                    .jti(jti).field("sid", sid).field("until", Instant.ofEpochMilli(keptUntil).toString())
                    .field("closed", closed).field("kept", notKept == null ? store.describe() : null)
                    .reason(notKept).log();
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("jti", jti);
            answer.put("sid", sid);
            answer.put("until", Instant.ofEpochMilli(keptUntil).toString());
            answer.put("closed", closed);
            answer.put("kept", notKept == null ? store.describe() : null);
            if (notKept != null) {
                answer.put("detail", "revoked on this node only: " + notKept);
            }
            HttpResponseStatus status = notKept == null ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE;
            String body = json(answer) + "\n";
            ctx.executor().execute(() -> HttpResponses.send(ctx, status, "application/json", body));
        });
    }

    private static String json(Map<String, Object> answer) {
        try {
            return Json.MAPPER.writeValueAsString(answer);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings and numbers is JSON", e);
        }
    }

    private static Long exp(JsonNode body) {
        JsonNode v = body.get("exp");
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.canConvertToLong() || !v.isIntegralNumber()) {
            throw new IllegalArgumentException("exp is not a whole number of seconds");
        }
        return v.asLong();
    }

    private static String id(JsonNode body, String name) {
        JsonNode node = body.get(name);
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isTextual()) {
            throw new IllegalArgumentException(name + " is not a string");
        }
        String v = node.asText();
        if (v != null && (v.isEmpty() || v.length() > MAX_ID_CHARS)) {
            throw new IllegalArgumentException(name + " of " + v.length() + " characters (expected: 1 to " + MAX_ID_CHARS + ")");
        }
        return v;
    }
}
