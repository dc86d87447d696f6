package dev.crossbar.bench.load;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** The human-readable form of results: one aligned row per run or summary, under one header. */
final class ResultTable {

    /** One column: its title, the result key it shows, and its width. */
    private record Column(String title, String key, int width) {
    }

    private static final List<Column> COLUMNS = List.of(
            new Column("label", "label", 10), new Column("scenario", "scenario", 8), new Column("size", "size", 8),
            new Column("n", "n", 6), new Column("rate", "rate", 6), new Column("win", "window", 4),
            new Column("batch", "batch", 5), new Column("session", "spawnSession", 7),
            new Column("slow", "slow", 12),
            new Column("msg/s", "msgPerS", 10), new Column("Mbit/s", "egressMbitS", 9),
            new Column("p50us", "p50Us", 8), new Column("p99us", "p99Us", 9), new Column("p99.9us", "p999Us", 9),
            new Column("lost", "lost", 8), new Column("merged", "mergedFrames", 8), new Column("reord", "reordered", 6),
            new Column("corrupt", "corrupt", 7), new Column("cpu-s/GB", "cpuSPerGB", 8),
            new Column("cpu-s/Mmsg", "cpuSPerMillionMsgs", 10), new Column("peakMB", "relayPeakRssMB", 7),
            new Column("stall-s", "stalledS", 7), new Column("1st-ms", "firstRelayMs", 7),
            new Column("p99@10s", "p99First10sUs", 9));

    /** What each part of a run of several shows on its own line under the run's. */
    private static final List<String> PART_FIGURES = List.of("msgPerS", "p50Us", "p99Us", "p999Us", "p99First10sUs",
            "sent", "lost", "mergedFrames", "reordered", "corrupt");

    private ResultTable() {
    }

    static void header(PrintStream out) {
        StringBuilder b = new StringBuilder("      ");
        for (Column c : COLUMNS) {
            b.append(pad(c.title, c.width)).append(' ');
        }
        out.println(b.toString().stripTrailing());
    }

    /** One row; {@code tag} is "run 1", "median", ... */
    static void row(PrintStream out, String tag, RunResult r) {
        StringBuilder b = new StringBuilder(pad(tag, 6));
        for (Column c : COLUMNS) {
            b.append(pad(format(r, c.key), c.width)).append(' ');
        }
        out.println(b.toString().stripTrailing());
        for (String part : parts(r)) {
            StringBuilder p = new StringBuilder("      " + part + ":");
            for (String f : PART_FIGURES) {
                p.append(' ').append(f).append(' ').append(format(r, part + "." + f));
            }
            out.println(p);
        }
        if (r.get("slowReceived") != null && r.get("stalled") != null) {
            out.printf(Locale.ROOT, "      stalled: %s reader(s), %s messages read before they stopped reading%n",
                    r.get("stalled"), format(r, "slowReceived"));
        }
        if ("idle".equals(r.get("scenario"))) {
            out.printf(Locale.ROOT, "      idle: %s connections in %ss; relay RSS %s -> %s MB (%s KB/conn); heap %s -> %s MB (%s B/conn); still open %s%n",
                    r.get("connections"), format(r, "connectS"), format(r, "relayRssBeforeMB"), format(r, "relayRssMB"),
                    format(r, "rssPerConnKB"), format(r, "heapBeforeMB"), format(r, "heapMB"), format(r, "heapPerConnB"),
                    format(r, "stillOpen"));
        }
    }

    /** A spread row: min-max of each summarised figure. */
    static void spread(PrintStream out, RunResult s) {
        StringBuilder b = new StringBuilder(pad("range", 6));
        for (Column c : COLUMNS) {
            Double lo = s.number(c.key + "Min");
            Double hi = s.number(c.key + "Max");
            String v = lo == null ? "" : compact(lo) + "-" + compact(hi);
            b.append(pad(v, c.width)).append(' ');
        }
        out.println(b.toString().stripTrailing());
    }

    /** The parts of a run of several, in the order their figures appear ({@code video.msgPerS} first). */
    static List<String> parts(RunResult r) {
        List<String> parts = new java.util.ArrayList<>();
        for (String k : r.values().keySet()) {
            int dot = k.indexOf('.');
            if (dot > 0 && !parts.contains(k.substring(0, dot))) {
                parts.add(k.substring(0, dot));
            }
        }
        return parts;
    }

    private static String format(RunResult r, String key) {
        Object v = key.equals("n") ? first(r, "receivers", "clients", "connections") : r.get(key);
        if (key.equals("n") && v != null && r.get("groups") != null) {
            v = r.get("groups") + "x" + v;
        }
        if (v == null) {
            return "-";
        }
        if (v instanceof Number n) {
            return compact(n.doubleValue());
        }
        return v.toString();
    }

    private static Object first(RunResult r, String... keys) {
        for (String k : keys) {
            if (r.get(k) != null) {
                return r.get(k);
            }
        }
        return null;
    }

    static String compact(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        if (Math.abs(v) >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (Math.abs(v) >= 1) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static String pad(String s, int width) {
        if (s.length() >= width) {
            return s;
        }
        return " ".repeat(width - s.length()) + s;
    }
}
