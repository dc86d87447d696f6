package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Graceful shutdown: every client hears 1001, and the relay is gone within the grace. */
class ShutdownIT {

    @Test
    void closeSends1001ToEveryClientAndStopsAccepting() {
        CrossbarServer server = CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0")
                .shutdownGrace(Duration.ofSeconds(2)).build());
        String base = "ws://127.0.0.1:" + server.port();
        JdkClient jdk = JdkClient.connect(java.net.URI.create(base + "/in/s"));
        NettyClient netty = NettyClient.connect(java.net.URI.create(base + "/out/s"));
        await("2 sessions", Duration.ofSeconds(5), () -> server.connections() == 2);
        for (int i = 0; i < 100; i++) {
            jdk.sendBinary(new byte[1000]);
        }
        long start = System.nanoTime();
        server.close();
        long tookMillis = (System.nanoTime() - start) / 1_000_000;

        assertEquals(1001, jdk.awaitClose(Duration.ofSeconds(5)));
        assertEquals(1001, netty.awaitClose(Duration.ofSeconds(5)).code());
        assertTrue(tookMillis < 5000, "shutdown took " + tookMillis + " ms");
        assertTrue(server.connections() == 0);
        jdk.close();
        netty.close();
    }

    @Test
    void shutdownUnderLoadClosesEveryoneWith1001() throws Exception {
        CrossbarServer server = CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0")
                .shutdownGrace(Duration.ofSeconds(5)).build());
        String base = "ws://127.0.0.1:" + server.port();
        NettyClient pub = NettyClient.connect(java.net.URI.create(base + "/in/load"));
        java.util.List<NettyClient> subs = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            subs.add(NettyClient.connect(java.net.URI.create(base + (i % 2 == 0 ? "/out/load" : "/mesh"))));
        }
        await("21 sessions", Duration.ofSeconds(5), () -> server.connections() == 21);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread flood = new Thread(() -> {
            while (!stop.get() && pub.channel.isActive()) {
                pub.write(new io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame(
                        io.netty.buffer.Unpooled.wrappedBuffer(new byte[4600])));
                pub.flush();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        flood.start();
        Thread.sleep(300);
        // The 1001 frame queues behind what each client has not read yet (up to its queue bound),
        // so the grace must cover draining that on this shared machine.
        long start = System.nanoTime();
        server.close();
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        stop.set(true);
        flood.join();
        assertTrue(tookMillis < 8000, "shutdown under load took " + tookMillis + " ms");
        assertEquals(1001, pub.awaitClose(Duration.ofSeconds(5)).code());
        StringBuilder codes = new StringBuilder();
        for (NettyClient s : subs) {
            codes.append(s.awaitClose(Duration.ofSeconds(5)).code()).append(' ');
            s.close();
        }
        assertEquals("1001 ".repeat(subs.size()).trim(), codes.toString().trim(), "close codes heard");
        pub.close();
    }
}
