package dev.crossbar.server.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.transport.RelayLoops;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The warm-up on real sockets: its relay carries every message to every receiver, nothing of it
 * but the loops it ran on (relay, clients, connections, buffers: the leak check runs on every
 * test) outlives it, and the deployed relay serves on those loops.
 */
class JitWarmupTest {

    @Test
    void carriesEveryMessageToEveryReceiverThenLeavesNothingRunning() throws InterruptedException {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        ServerConfig deployed = ServerConfig.builder().listen("127.0.0.1:0").eventLoops(2).build();
        JitWarmup.Report report;
        try (RelayLoops loops = RelayLoops.open(true, 2)) {
            report = JitWarmup.run(deployed, Duration.ofMillis(300), loops);
            assertFalse(loops.io().isShuttingDown(), "the loops go on, for the deployed relay");
        }

        assertNull(report.stoppedBy(), report.describe());
        // At least one round: the mesh's two messages from each member, one to the fan-out, one large.
        assertTrue(report.messages() >= 2L * JitWarmup.MESH_MEMBERS + 2, report.describe());
        assertEquals(report.expected(), report.delivered(), "every delivery owed arrived: " + report.describe());
        // Connections came and went while the traffic ran (ConnectionChurnTest: each path).
        assertTrue(report.connections() >= 1, report.describe());
        assertTrue(report.describe().startsWith("JIT warm-up: "), report.describe());
        // The second pass, one message at a time, ran after the first.
        assertTrue(report.elapsed().compareTo(Duration.ofMillis(300).plus(JitWarmup.SECOND_PASS)) >= 0,
                report.describe());
        List<String> left = awaitOwnThreadsGone(before, Duration.ofSeconds(10));
        assertTrue(left.isEmpty(), "threads of the warm-up still running once its loops closed: " + left);
    }

    @Test
    void theDeployedRelayServesOnTheLoopsTheWarmUpRanOnAndLeavesThemToTheirOwner() throws Exception {
        ServerConfig deployed = ServerConfig.builder().listen("127.0.0.1:0").eventLoops(2).build();
        try (RelayLoops loops = RelayLoops.open(true, 2)) {
            JitWarmup.Report report = JitWarmup.run(deployed, Duration.ofMillis(100), loops);
            assertNull(report.stoppedBy(), report.describe());
            CrossbarServer relay = CrossbarServer.start(deployed, loops);
            try {
                List<EventExecutor> io = new ArrayList<>();
                loops.io().forEach(io::add);
                assertEquals(io, relay.eventLoops(), "the warm-up's loops");
                assertEquals(0, relay.connections(), "none of the warm-up's connections");
                URI mesh = URI.create("ws://127.0.0.1:" + relay.localAddress().getPort() + "/lab/data");
                try (JdkClient a = JdkClient.connect(mesh); JdkClient b = JdkClient.connect(mesh)) {
                    RelayServerExtension.await("both joined", Duration.ofSeconds(10), () -> relay.connections() == 2);
                    a.sendText("after the warm-up");
                    assertEquals("after the warm-up", b.take(Duration.ofSeconds(10)).string());
                }
            } finally {
                relay.close();
            }
            assertFalse(loops.io().isShuttingDown(), "a relay on given loops leaves them running");
            assertFalse(loops.accept().isShuttingDown(), "the accepting loop too");
        }
    }

    @Test
    void messagesAreCutToTheDeployedLimitSoNoneIsRefused() {
        // 1 KiB: below the fan-out's 4,600 B and the large 64 KiB, which would be refused (1009) uncut.
        ServerConfig deployed = ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1).maxMessageBytes(1024).build();

        JitWarmup.Report report;
        try (RelayLoops loops = RelayLoops.open(true, 1)) {
            report = JitWarmup.run(deployed, Duration.ofMillis(200), loops);
        }

        assertNull(report.stoppedBy(), report.describe());
        assertTrue(report.messages() > 0, report.describe());
        assertEquals(report.expected(), report.delivered(), report.describe());
    }

    @Test
    void itsRelayHasTheDeployedShapeAndNothingThatReachesOutside() {
        ServerConfig deployed = ServerConfig.builder().listen("0.0.0.0:443").eventLoops(3).homeLoopMembers(0)
                .maxMessageBytes(2 * 1024 * 1024).adminListen("127.0.0.1:9000").build();

        ServerConfig relay = JitWarmup.relayLike(deployed);

        InetSocketAddress listen = relay.listen();
        assertTrue(listen.getAddress().isLoopbackAddress(), listen.toString());
        assertEquals(0, listen.getPort(), "an ephemeral port");
        assertEquals(3, relay.eventLoops());
        assertEquals(0, relay.homeLoopMembers());
        assertEquals(2 * 1024 * 1024, relay.maxMessageBytes());
        assertNull(relay.adminListen());
        assertNull(relay.nats());
        assertFalse(relay.auth().enabled());
        assertFalse(relay.tls().enabled());
    }

    /** The relay's and the warm-up's own threads (named crossbar-*) started since {@code before}, once they have ended. */
    private static List<String> awaitOwnThreadsGone(Set<Thread> before, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        List<String> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t) && t.isAlive() && t.getName().startsWith("crossbar-"))
                    .map(Thread::getName)
                    .collect(Collectors.toList());
            if (left.isEmpty()) {
                return left;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        return left;
    }
}
