package dev.crossbar.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * A reserved path that this address does not serve, because {@code --admin-listen} moved it to the
 * admin address: 404. Registered so that the path still can never become a topic. Stateless.
 */
public final class ServedElsewhereEndpoint implements HttpEndpoint {

    public static final ServedElsewhereEndpoint INSTANCE = new ServedElsewhereEndpoint();

    private ServedElsewhereEndpoint() {
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        HttpResponses.error(ctx, HttpResponseStatus.NOT_FOUND, "served on the relay's admin address, not here");
    }
}
