package dev.crossbar.server.admin;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.crossbar.server.auth.AdminAuthority;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.config.Reloaded;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * {@code POST /admin/reload}: reads the configuration again and applies it, as SIGHUP does.
 * Answers 200 with {@code {"applied":true,...}}, or 409 with {@code {"applied":false,"detail":why}}
 * when the configuration was refused and the running one kept.
 *
 * <p>The reload reads files, so it runs on the admin thread, never on the event loop; the answer
 * is written from there. Ownership: the request is borrowed.
 */
public final class ReloadEndpoint implements HttpEndpoint {

    public static final String PATH = "/admin/reload";
    private final AdminAuthority authority;
    private final Supplier<Reloaded> reload;
    private final Executor adminThread;

    public ReloadEndpoint(AdminAuthority authority, Supplier<Reloaded> reload, Executor adminThread) {
        this.authority = requireNonNull(authority, "authority");
        this.reload = requireNonNull(reload, "reload");
        this.adminThread = requireNonNull(adminThread, "adminThread");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!authority.permits(ctx, request)) {
            return;
        }
        if (!HttpMethod.POST.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "use POST to reload the configuration");
            return;
        }
        adminThread.execute(() -> {
            Reloaded r = reload.get();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("applied", r.applied());
            body.put("detail", r.detail());
            String json;
            try {
                json = Json.MAPPER.writeValueAsString(body);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("a boolean and a string are JSON", e);
            }
            HttpResponseStatus status = r.applied() ? HttpResponseStatus.OK : HttpResponseStatus.CONFLICT;
            ctx.executor().execute(() -> HttpResponses.send(ctx, status, "application/json", json + "\n"));
        });
    }
}
