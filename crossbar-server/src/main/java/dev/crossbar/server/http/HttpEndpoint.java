package dev.crossbar.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;

/** A reserved path the relay answers itself (health, statistics, metrics) instead of routing. */
public interface HttpEndpoint {

    /**
     * Answers {@code request}. Ownership: the request is borrowed; the dispatcher releases it after
     * this returns, so an endpoint that passes it on must retain it.
     */
    void handle(ChannelHandlerContext ctx, FullHttpRequest request);
}
