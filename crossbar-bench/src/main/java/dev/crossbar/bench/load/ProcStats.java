package dev.crossbar.bench.load;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One reading of a process's CPU time and memory from Linux's {@code /proc/<pid>/stat} and
 * {@code /proc/<pid>/status}: what the relay cost, measured from outside, the same way for any
 * relay whatever its language.
 *
 * @param cpuTicks utime + stime, in clock ticks ({@link #TICKS_PER_SECOND})
 * @param rssKb    resident set size now (VmRSS)
 * @param hwmKb    peak resident set size over the process's life (VmHWM)
 */
public record ProcStats(long cpuTicks, long rssKb, long hwmKb) {

    /** USER_HZ: 100 on every Linux architecture this runs on (it is fixed in the kernel ABI). */
    static final int TICKS_PER_SECOND = 100;

    public double cpuSeconds() {
        return cpuTicks / (double) TICKS_PER_SECOND;
    }

    /** Reads {@code pid}'s statistics; {@code pid} "self" works too. */
    public static ProcStats read(String pid) throws IOException {
        Path dir = Path.of("/proc", pid);
        String stat = Files.readString(dir.resolve("stat"));
        String status = Files.readString(dir.resolve("status"));
        return new ProcStats(parseCpuTicks(stat), parseStatusKb(status, "VmRSS"), parseStatusKb(status, "VmHWM"));
    }

    /**
     * CPU time, in clock ticks, of {@code pid}'s JIT compiler threads (a JVM's "C1 CompilerThre"
     * and "C2 CompilerThre"; 0 for a relay without them): the one-off cost of compiling a fresh
     * JVM's hot code, which lands in a short run's window, apart from the cost of relaying.
     */
    static long compilerTicks(String pid) throws IOException {
        long ticks = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", pid, "task"))) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException gone) {
                    continue; // the thread ended while we looked
                }
                if (isCompilerThread(stat)) {
                    ticks += parseCpuTicks(stat);
                }
            }
        }
        return ticks;
    }

    static boolean isCompilerThread(String stat) {
        int open = stat.indexOf('(');
        return open >= 0 && stat.startsWith("C", open + 1) && stat.startsWith(" CompilerThre", open + 3);
    }

    /** The session id of {@code pid} ("self" works too): field 6 of its {@code stat} line. */
    static long sessionId(String pid) throws IOException {
        return parseSessionId(Files.readString(Path.of("/proc", pid, "stat")));
    }

    static long parseSessionId(String stat) {
        return Long.parseLong(fieldsAfterName(stat)[6 - 3]);
    }

    /**
     * utime + stime from a {@code stat} line: fields 14 and 15, counted after the command name,
     * which is in parentheses and may itself contain spaces and parentheses.
     */
    static long parseCpuTicks(String stat) {
        String[] f = fieldsAfterName(stat);
        return Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
    }

    /**
     * The fields after the command name, which is in parentheses and may itself contain spaces and
     * parentheses: field 3 (state) is element 0, so field k is element k - 3.
     */
    private static String[] fieldsAfterName(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("stat: no ')' after the command name in '" + stat + "'");
        }
        String[] f = stat.substring(close + 2).trim().split("\\s+");
        if (f.length < 13) {
            throw new IllegalArgumentException("stat: " + f.length + " fields after the name (expected: >= 13)");
        }
        return f;
    }

    /** A "Key:   123 kB" value from a {@code status} file, in kB; -1 if absent (a kernel thread). */
    static long parseStatusKb(String status, String key) {
        for (String line : status.split("\n")) {
            if (line.startsWith(key + ":")) {
                String[] parts = line.substring(key.length() + 1).trim().split("\\s+");
                return Long.parseLong(parts[0]);
            }
        }
        return -1;
    }
}
