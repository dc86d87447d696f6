package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Graceful shutdown: every client hears 1001, and the relay is gone within the grace. */
class ShutdownTest {

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
}
