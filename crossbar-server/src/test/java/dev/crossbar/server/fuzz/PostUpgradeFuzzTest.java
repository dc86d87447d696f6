package dev.crossbar.server.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;

/** Fuzzes the frames a client may send once it is a WebSocket member of a topic. */
class PostUpgradeFuzzTest {

    @FuzzTest(maxDuration = "20s")
    void anyBytesAfterTheUpgrade(byte[] bytes) {
        WireHarness.run(bytes, true);
    }
}
