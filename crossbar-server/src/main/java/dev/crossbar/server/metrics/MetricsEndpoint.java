package dev.crossbar.server.metrics;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /metrics}: Prometheus scrapes. The scrape walks every connection's counters, so it runs on
 * the relay's admin thread, not on the event loop that received the request.
 */
public final class MetricsEndpoint implements HttpEndpoint {

    public static final String PATH = "/metrics";
    /** The Prometheus text exposition format, which every Prometheus-compatible scraper reads. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final Logger log = LoggerFactory.getLogger(MetricsEndpoint.class);

    private final RelayMetrics metrics;
    private final EventExecutor executor;

    public MetricsEndpoint(RelayMetrics metrics, EventExecutor executor) {
        this.metrics = requireNonNull(metrics, "metrics");
        this.executor = requireNonNull(executor, "executor");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!HttpMethod.GET.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "/metrics answers GET");
            return;
        }
        try {
            executor.execute(() -> {
                try {
                    HttpResponses.send(ctx, HttpResponseStatus.OK, CONTENT_TYPE, metrics.scrape());
                } catch (RuntimeException e) {
                    log.warn("{} metrics scrape failed", ctx.channel(), e);
                    HttpResponses.error(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, "scrape failed");
                }
            });
        } catch (RejectedExecutionException e) {
            HttpResponses.error(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "relay shutting down");
        }
    }
}
