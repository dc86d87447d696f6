package dev.crossbar.server.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The relay's threads: as many event loops as asked, one accepting loop, all stopped by close. */
class RelayLoopsTest {

    @Test
    void opensTheLoopsAskedForAndStopsThemAll() throws Exception {
        RelayLoops loops = RelayLoops.open(true, 2);
        int io = 0;
        for (EventExecutor loop : loops.io()) {
            io++;
            assertTrue(loop.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS)
                    .startsWith("crossbar-io"), "an event loop runs tasks");
        }
        assertEquals(2, io);
        assertEquals(2, loops.ioLoops());
        int accept = 0;
        for (EventExecutor ignored : loops.accept()) {
            accept++;
        }
        assertEquals(1, accept, "one accepting loop");

        loops.close();

        assertTrue(loops.io().isTerminated(), "event loops stopped");
        assertTrue(loops.accept().isTerminated(), "accepting loop stopped");
    }

    @Test
    void noEventLoopsIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RelayLoops.open(true, 0));
        assertEquals("event loops: 0 (expected: 1 or more)", e.getMessage());
    }
}
