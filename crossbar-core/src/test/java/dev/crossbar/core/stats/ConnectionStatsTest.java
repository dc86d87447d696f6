package dev.crossbar.core.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ConnectionStatsTest {

    @Test
    void dropsOfAFullLoopBacklogAreCountedButNotBlamedOnTheReceiver() {
        ConnectionStats stats = ConnectionStats.startingNow();
        stats.recordDropped();              // over its own bound: its own slowness
        stats.recordDroppedElsewhere();     // its event loop's backlog was full: not its doing
        stats.recordDroppedElsewhere();
        assertEquals(3, stats.dropped(), "every drop is reported");
        // What --slow-consumer disconnect judges a client by.
        assertEquals(1, stats.droppedOverBound());
    }
}
