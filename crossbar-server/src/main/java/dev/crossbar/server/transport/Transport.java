package dev.crossbar.server.transport;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/**
 * The I/O transport: native epoll where the platform has it (fewer copies, less garbage), NIO otherwise.
 *
 * @param socketChannel the transport's client socket, for connections the relay opens itself
 */
public record Transport(String name, IoHandlerFactory ioHandlerFactory, Class<? extends ServerChannel> serverChannel,
                        Class<? extends SocketChannel> socketChannel) {

    /** Epoll if {@code preferNative} and available, otherwise NIO. */
    public static Transport select(boolean preferNative) {
        if (preferNative && Epoll.isAvailable()) {
            return new Transport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class,
                    EpollSocketChannel.class);
        }
        return new Transport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class, NioSocketChannel.class);
    }
}
