package dev.crossbar.server.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The relay's threads: one loop that accepts connections and the event loops that serve them, on
 * one transport.
 */
public final class RelayLoops implements AutoCloseable {

    private final Transport transport;
    private final EventLoopGroup accept;
    private final EventLoopGroup io;
    private final int ioLoops;

    private RelayLoops(Transport transport, int ioLoops) {
        this.transport = transport;
        this.ioLoops = ioLoops;
        this.accept = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("crossbar-accept"),
                transport.ioHandlerFactory());
        this.io = new MultiThreadIoEventLoopGroup(ioLoops, new DefaultThreadFactory("crossbar-io"),
                transport.ioHandlerFactory());
    }

    /** Native epoll if {@code preferNative} and available, else NIO; {@code ioLoops} event loops. */
    public static RelayLoops open(boolean preferNative, int ioLoops) {
        if (ioLoops < 1) {
            throw new IllegalArgumentException("event loops: " + ioLoops + " (expected: 1 or more)");
        }
        return new RelayLoops(Transport.select(preferNative), ioLoops);
    }

    public Transport transport() {
        return transport;
    }

    /** The loop that accepts connections. */
    public EventLoopGroup accept() {
        return accept;
    }

    /** The event loops connections are served on. */
    public EventLoopGroup io() {
        return io;
    }

    public int ioLoops() {
        return ioLoops;
    }

    /** Stops the loops, waiting up to 2 s for them to end. */
    @Override
    public void close() {
        accept.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        io.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        accept.terminationFuture().awaitUninterruptibly(2, TimeUnit.SECONDS);
        io.terminationFuture().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }
}
