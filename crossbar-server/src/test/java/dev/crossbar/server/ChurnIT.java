package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Thousands of connect/send/disconnect cycles, with publishers hopping between routes every few
 * milliseconds as the original's users did for months: afterwards no topic, no session, no
 * buffer is left, and memory is back near where it started.
 */
class ChurnIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension();

    /** Direct memory held by the allocator the relay uses (Netty 4.2's default, adaptive). */
    static long usedDirectMemory() {
        return ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    @Test
    void churnLeavesNothingBehind() throws Exception {
        // A steady subscriber watches one stream through the churn, to show relaying goes on.
        long heapBefore;
        long directBefore;
        try (JdkClient watcher = JdkClient.connect(relay.ws("/out/steady"));
             JdkClient steadyPub = JdkClient.connect(relay.ws("/in/steady"))) {
            await("steady pair", Duration.ofSeconds(5), () -> relay.server().connections() == 2);
            heapBefore = usedHeapAfterGc();
            directBefore = usedDirectMemory();

            Random random = new Random(7);
            int cycles = 2_000;
            int workers = 4;
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int w = 0; w < workers; w++) {
                int id = w;
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < cycles / workers; i++) {
                            String route = switch ((id + i) % 4) {
                                case 0 -> "/in/hop" + (i % 13);
                                case 1 -> "/out/hop" + (i % 13);
                                case 2 -> "/room" + (i % 7);
                                default -> "/in/hop" + ((i + 5) % 13);
                            };
                            try (NettyClient c = NettyClient.connect(relay.ws(route))) {
                                c.sendBinary(new byte[1 + (i % 700)]);
                                c.sendText("hop " + i);
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                t.start();
                threads.add(t);
            }
            int steadySent = 0;
            while (threads.stream().anyMatch(Thread::isAlive)) {
                steadyPub.sendText("tick " + steadySent++);
                Thread.sleep(2 + random.nextInt(3));
            }
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(failures.isEmpty(), "churn client failed: " + (failures.isEmpty() ? "" : failures.get(0)));
            for (int i = 0; i < steadySent; i++) {
                assertEquals("tick " + i, watcher.take(Duration.ofSeconds(10)).string());
            }
        }
        await("no sessions", Duration.ofSeconds(10), () -> relay.server().connections() == 0);
        await("no topics", Duration.ofSeconds(10), () -> relay.server().topics().size() == 0);
        await("no open connections", Duration.ofSeconds(10), () -> relay.server().openConnections() == 0);
        // The allocator keeps some chunks cached for reuse, so "near" rather than "equal".
        await("direct memory back near its start", Duration.ofSeconds(10),
                () -> usedDirectMemory() <= directBefore + 16L * 1024 * 1024);
        long heapAfter = usedHeapAfterGc();
        assertTrue(heapAfter < heapBefore + 32L * 1024 * 1024,
                "heap grew from " + heapBefore + " to " + heapAfter + " bytes over the churn");
        System.out.printf("churn: heap before %d B, after %d B; direct memory before %d B, after %d B%n",
                heapBefore, heapAfter, directBefore, usedDirectMemory());
    }
}
