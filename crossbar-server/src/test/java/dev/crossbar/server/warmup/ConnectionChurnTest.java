package dev.crossbar.server.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.transport.RelayLoops;
import dev.crossbar.server.transport.Transport;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The warm-up's churn on real sockets: each step upgrades a connection on the next path, whose
 * message reaches exactly the receivers it reports, and leaves no connection behind once closed;
 * the probes between them (a line break or nothing, then a hang-up) disturb none of it.
 */
class ConnectionChurnTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private RelayLoops loops;
    private CrossbarServer relay;
    private EventLoopGroup clients;
    private final List<WarmupClient> mesh = new ArrayList<>();

    @BeforeEach
    void start() {
        loops = RelayLoops.open(true, 2);
        relay = CrossbarServer.startQuietly(JitWarmup.relayLike(
                ServerConfig.builder().listen("127.0.0.1:0").eventLoops(2).build()), loops);
        clients = new MultiThreadIoEventLoopGroup(1, Transport.select(true).ioHandlerFactory());
    }

    @AfterEach
    void stop() {
        mesh.forEach(c -> c.close().awaitUninterruptibly(1, TimeUnit.SECONDS));
        relay.close();
        loops.close();
        clients.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
    }

    @Test
    void eachStepOpensTheNextPathDeliversWhatItOwesAndClosesThePrevious() throws Exception {
        Transport transport = Transport.select(true);
        AtomicLong meshReceived = new AtomicLong();
        for (int i = 0; i < JitWarmup.MESH_MEMBERS; i++) {
            mesh.add(WarmupClient.connect(clients, transport.socketChannel(), relay.localAddress(),
                    JitWarmup.MESH_PATH, 1024, meshReceived));
        }
        awaitValue("mesh members connected", relay::connections, JitWarmup.MESH_MEMBERS);
        ConnectionChurn churn = new ConnectionChurn(clients, transport.socketChannel(), relay.localAddress(), 1024,
                new byte[64]);

        long owed = 0;
        for (int step = 0; step < 2 * ConnectionChurn.PATHS.size(); step++) {
            owed += churn.step();
            awaitValue("the mesh received what the step owed", meshReceived::get, owed);
            // The previous connection is gone, the new one is there (with a close frame or without).
            awaitValue("the previous connection closed", relay::connections, JitWarmup.MESH_MEMBERS + 1);
        }
        churn.close();

        assertEquals(2L * ConnectionChurn.PATHS.size(), churn.opened());
        assertEquals(2L, churn.probes(), "one probe per round of the paths");
        // Only the mesh path's messages have receivers: one per member, twice.
        assertEquals(2L * JitWarmup.MESH_MEMBERS, owed);
        awaitValue("the last connection closed", relay::connections, JitWarmup.MESH_MEMBERS);
        assertEquals(owed, meshReceived.get(), "no message beyond those owed reached the mesh");
    }

    private static void awaitValue(String what, LongSupplier value, long expected) {
        RelayServerExtension.await(what + " (" + expected + ")", BOUND, () -> value.getAsLong() == expected);
    }
}
