package dev.crossbar.server;

import dev.crossbar.testing.LeakGateCanary;
import org.junit.jupiter.api.Test;

/**
 * The leak gate fails this module's build: it picks up LeakCheck and its session listener from
 * crossbar-core's test-jar, and a deliberate leak is caught wherever it is reported.
 */
class LeakGateCanaryTest {

    @Test
    void aLeakInATestFailsItsClass() {
        LeakGateCanary.assertALeakInATestFailsItsClass();
    }

    @Test
    void aLeakReportedLateFailsTheNextClass() {
        LeakGateCanary.assertALateReportFailsTheNextClass();
    }

    @Test
    void aLeakReportedAfterTheLastClassFailsTheRun() {
        LeakGateCanary.assertALeakAfterTheLastClassFailsTheRun();
    }
}
