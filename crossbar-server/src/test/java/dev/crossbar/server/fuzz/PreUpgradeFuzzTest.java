package dev.crossbar.server.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;

/** Fuzzes what a client may send before the upgrade: request lines, headers, garbage. */
class PreUpgradeFuzzTest {

    @FuzzTest(maxDuration = "20s")
    void anyBytesBeforeTheUpgrade(byte[] bytes) {
        WireHarness.run(bytes, false);
    }
}
