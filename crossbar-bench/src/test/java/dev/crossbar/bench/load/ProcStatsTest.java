package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ProcStatsTest {

    @Test
    void cpuTicksAreFields14And15EvenWhenTheNameHasSpacesAndParentheses() {
        String stat = "4242 (my (odd) relay) S 1 4242 4242 0 -1 4194304 5000 0 0 0 731 269 0 0 20 0 9 0 100 "
                + "1000000 2500 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assertEquals(1000, ProcStats.parseCpuTicks(stat));
        assertEquals(4242, ProcStats.parseSessionId(stat), "field 6");
    }

    @Test
    void compilerThreadsAreTheJvmsC1AndC2() {
        String tail = " S 1 4242 4242 0 -1 4194304 5000 0 0 0 731 269 0 0 20 0 9 0 100 1000000 2500 0";
        assertTrue(ProcStats.isCompilerThread("4243 (C2 CompilerThre)" + tail));
        assertTrue(ProcStats.isCompilerThread("4244 (C1 CompilerThre)" + tail));
        assertFalse(ProcStats.isCompilerThread("4245 (crossbar-io-1)" + tail));
        assertFalse(ProcStats.isCompilerThread("4246 (rust-tokio-rela)" + tail));
    }

    @Test
    void thisJvmHasCompilerThreadsThatHaveWorked() throws Exception {
        assertTrue(ProcStats.compilerTicks("self") >= 0);
        assertTrue(ProcStats.compilerTicks("self") <= ProcStats.read("self").cpuTicks());
    }

    @Test
    void statusValuesInKilobytes() {
        String status = "Name:\tjava\nVmPeak:\t 3000000 kB\nVmHWM:\t  150000 kB\nVmRSS:\t  120000 kB\nThreads:\t20\n";
        assertEquals(120_000, ProcStats.parseStatusKb(status, "VmRSS"));
        assertEquals(150_000, ProcStats.parseStatusKb(status, "VmHWM"));
        assertEquals(-1, ProcStats.parseStatusKb(status, "VmSwap"));
    }

    @Test
    void readsThisProcess() throws Exception {
        ProcStats s = ProcStats.read("self");
        assertTrue(s.rssKb() > 0);
        assertTrue(s.hwmKb() >= s.rssKb());
        assertTrue(s.cpuTicks() > 0, "a JVM that has run tests has used CPU");
    }

    @Test
    void aMalformedStatLineSaysSo() {
        assertThrows(IllegalArgumentException.class, () -> ProcStats.parseCpuTicks("garbage"));
    }

    @Test
    void heapInfoOfSerialAndG1() {
        String serial = """
                 def new generation   total 19648K, used 5401K [0x00000000f0000000, 0x00000000f1550000, 0x00000000f5550000)
                  eden space 17472K,  30% used [0x00000000f0000000, 0x00000000f0546758, 0x00000000f1110000)
                 tenured generation   total 43712K, used 10000K [0x00000000f5550000, 0x00000000f8000000, 0x0000000100000000)
                 Metaspace       used 20000K, committed 20480K, reserved 1114112K
                """;
        assertEquals((5401 + 10000) * 1024L, JvmHeap.parseUsedBytes(serial));
        String g1 = " garbage-first heap   total 65536K, used 12345K [0x0000000706000000, 0x0000000800000000)\n";
        assertEquals(12345 * 1024L, JvmHeap.parseUsedBytes(g1));
        assertEquals(-1, JvmHeap.parseUsedBytes("no heap here"));
    }
}
