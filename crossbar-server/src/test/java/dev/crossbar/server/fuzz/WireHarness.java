package dev.crossbar.server.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.ServerConfig;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.http.HealthEndpoint;
import dev.crossbar.server.transport.ConnectionLimiter;
import dev.crossbar.server.transport.CrossbarInitializer;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Runs raw client bytes through the real pipeline on {@link EmbeddedChannel}s: fast enough for
 * coverage-guided fuzzing, and the same handlers a socket gets. A second, well-behaved member on
 * the same topic receives whatever is relayed, so fan-out is exercised too.
 */
final class WireHarness {

    static final String UPGRADE = "GET /fuzz HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    private static final ServerConfig CONFIG = ServerConfig.builder()
            .maxMessageBytes(64 * 1024).maxClientQueueBytes(64 * 1024).build();

    private WireHarness() {
    }

    /** Feeds {@code bytes} (after an upgrade if {@code upgradeFirst}); asserts nothing is left behind. */
    static void run(byte[] bytes, boolean upgradeFirst) {
        TopicRegistry topics = new TopicRegistry(16);
        Router router = new Router(topics, 1024 * 1024);
        CrossbarInitializer init = new CrossbarInitializer(CONFIG, router,
                new DefaultChannelGroup(ImmediateEventExecutor.INSTANCE), Map.of(HealthEndpoint.PATH, HealthEndpoint.INSTANCE),
                new ConnectionLimiter(100, 100), new HandshakeFailures(), null, null, java.util.List.of());
        EmbeddedChannel peer = new EmbeddedChannel(init);
        EmbeddedChannel fuzzed = new EmbeddedChannel(init);
        try {
            peer.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
            if (upgradeFirst) {
                fuzzed.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
            }
            // In two pieces, so decoders see a message split across reads.
            int cut = bytes.length / 2;
            fuzzed.writeInbound(Unpooled.wrappedBuffer(bytes, 0, cut));
            if (fuzzed.isOpen()) { // the first half may already have been refused
                fuzzed.writeInbound(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
            }
            for (int i = 0; i < 3; i++) {
                fuzzed.runPendingTasks();
                peer.runPendingTasks();
            }
        } finally {
            drainAndClose(fuzzed);
            drainAndClose(peer);
        }
        assertEquals(0, topics.size(), "a topic outlived its members");
        assertEquals(0, router.backlogBytes(), "fan-out backlog not drained");
    }

    private static void drainAndClose(EmbeddedChannel ch) {
        ch.close();
        ch.runPendingTasks();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(o);
        }
        while ((o = ch.readInbound()) != null) {
            ReferenceCountUtil.release(o);
        }
        ch.finishAndReleaseAll();
    }
}
