package dev.crossbar.bench.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads another JVM's live heap with {@code jcmd} (a full GC, then the heap summary); -1 if it cannot. */
final class JvmHeap {

    /** jcmd attaches and answers in well under this; more means something is wrong. */
    static final long JCMD_TIMEOUT_SECONDS = 20;

    /** "used 1234K" after each generation or region set in GC.heap_info (Serial, Parallel, G1). */
    private static final Pattern USED = Pattern.compile(
            "^\\s*(?:def new generation|tenured generation|PSYoungGen|ParOldGen|garbage-first heap)\\s+total \\d+K, used (\\d+)K",
            Pattern.MULTILINE);

    private JvmHeap() {
    }

    static long liveHeapBytes(long pid) {
        try {
            String comm = Files.readString(Path.of("/proc", Long.toString(pid), "comm")).trim();
            if (!comm.equals("java")) {
                return -1;
            }
            jcmd(pid, "GC.run");
            return parseUsedBytes(jcmd(pid, "GC.heap_info"));
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Sum of the "used" figures of the heap's generations, in bytes; -1 if none is found. */
    static long parseUsedBytes(String heapInfo) {
        Matcher m = USED.matcher(heapInfo);
        long kb = 0;
        boolean found = false;
        while (m.find()) {
            kb += Long.parseLong(m.group(1));
            found = true;
        }
        return found ? kb * 1024 : -1;
    }

    private static String jcmd(long pid, String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("jcmd", Long.toString(pid), command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(JCMD_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("jcmd " + command + " timed out");
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
