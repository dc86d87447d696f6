package dev.crossbar.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/** {@code /healthz}: 200 while the relay is serving. Stateless, so one instance serves every channel. */

public final class HealthEndpoint implements HttpEndpoint {

    public static final String PATH = "/healthz";
    public static final HealthEndpoint INSTANCE = new HealthEndpoint();

    private HealthEndpoint() {
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        HttpResponses.send(ctx, HttpResponseStatus.OK, "text/plain; charset=utf-8", "ok\n");
    }
}
