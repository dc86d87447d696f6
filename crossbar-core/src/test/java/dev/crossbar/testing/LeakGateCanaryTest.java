package dev.crossbar.testing;

import org.junit.jupiter.api.Test;

/** The leak gate fails this module's build: a deliberate leak is caught wherever it is reported. */
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
