package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The layout of one run's traffic, built from its {@link LoadConfig} before connecting: its
 * {@link Part}s, each a set of {@link Group}s (one stream or topic each). {@link LoadRun} connects,
 * drives and checks every group the same way, whatever the scenario.
 *
 * <p>Paths: the single-topic scenarios use {@code /in/<t>}, {@code /out/<t>} and {@code /<t>} as
 * they always have. A campus's shapes name their streams as a deployment would (README's stream
 * rules): cameras {@code /in/cam/<t>/<i>} to {@code /out/cam/<t>/<i>}, data topics
 * {@code /data/<t>/<i>}, the file transfer {@code /in/files/<t>} to {@code /out/files/<t>}, so one
 * rule ({@link #FILE_PATTERN}) can make the file transfer lossless and leave the rest alone.
 */
final class Plan {

    /** Mixed's parts, as reported: {@code video.p99Us}, {@code data.lost}, {@code file.msgPerS}, ... */
    static final String VIDEO = "video";
    static final String DATA = "data";
    static final String FILE = "file";

    /** Mixed's data topics: a lab's sensor readings and controls, two clients each (the lab and a student). */
    static final int DATA_SIZE = 200;
    static final double DATA_RATE = 10;
    static final int DATA_CLIENTS = 2;
    /**
     * Mixed's file transfer: 1 MiB messages to one reader, 10 a second (about 84 Mbit/s, a
     * campus's 100 Mbit/s link), at most 4 in flight, as a lossless upload of images or files.
     */
    static final int FILE_SIZE = 1024 * 1024;
    static final double FILE_RATE = 10;
    static final int FILE_WINDOW = 4;
    static final int FILE_RECEIVERS = 1;
    /** The streams mixed's file transfer uses; a relay's back-pressure rule for them. */
    static final String FILE_PATTERN = "/files/**";

    private final List<Part> parts;
    private final boolean spreadPhases;

    private Plan(List<Part> parts, boolean spreadPhases) {
        this.parts = List.copyOf(parts);
        this.spreadPhases = spreadPhases;
    }

    /** The plan of a run of {@code config} whose streams and topics are named after {@code topic}. */
    static Plan of(LoadConfig config, String topic) {
        requireNonNull(topic, "topic");
        Scenario s = config.scenario();
        if (!s.sends()) {
            throw new IllegalArgumentException(s.label() + " sends nothing: no plan of traffic");
        }
        List<Part> parts = new ArrayList<>();
        switch (s) {
            case MESH -> {
                Part p = new Part(s.label(), new MessageFormat(config.size()), config.rate(), config.window(), true);
                p.add("/" + topic, "/" + topic, config.count(), 0);
                parts.add(p);
            }
            case STREAMS -> parts.add(cameras(s.label(), config, topic, 0));
            case TOPICS -> parts.add(dataTopics(s.label(), config.groups(), config.count(), config.size(), config.rate(), topic));
            case MIXED -> {
                parts.add(cameras(VIDEO, config, topic, config.stalled()));
                if (config.dataTopics() > 0) {
                    parts.add(dataTopics(DATA, config.dataTopics(), DATA_CLIENTS, DATA_SIZE, DATA_RATE, topic));
                }
                Part file = new Part(FILE, new MessageFormat(FILE_SIZE), FILE_RATE, FILE_WINDOW, false);
                file.add("/in/files/" + topic, "/out/files/" + topic, FILE_RECEIVERS, 0);
                parts.add(file);
            }
            default -> {
                // pingpong, large, fanout, slow: one 1:N stream.
                Part p = new Part(s.label(), new MessageFormat(config.size()), config.rate(), config.window(), false);
                p.add("/in/" + topic, "/out/" + topic, config.count(), s == Scenario.SLOW ? 1 : 0);
                parts.add(p);
            }
        }
        return new Plan(parts, s.campus());
    }

    /** {@code groups} cameras of {@code count} viewers each; the first also has {@code stalled} readers. */
    private static Part cameras(String name, LoadConfig c, String topic, int stalled) {
        Part p = new Part(name, new MessageFormat(c.size()), c.rate(), c.window(), false);
        for (int i = 0; i < c.groups(); i++) {
            String stream = "cam/" + topic + "/" + i;
            p.add("/in/" + stream, "/out/" + stream, c.count(), i == 0 ? stalled : 0);
        }
        return p;
    }

    private static Part dataTopics(String name, int topics, int clients, int size, double rate, String topic) {
        Part p = new Part(name, new MessageFormat(size), rate, 0, true);
        for (int i = 0; i < topics; i++) {
            String path = "/data/" + topic + "/" + i;
            p.add(path, path, clients, 0);
        }
        return p;
    }

    /**
     * Connections a run of this shape opens, for validation before anything is built: 1:N streams
     * have a publisher, their receivers and stalled readers; N:N topics their clients.
     */
    static long connections(Scenario s, int groups, int count, int dataTopics, int stalled) {
        return switch (s) {
            case IDLE -> count;
            case MESH -> count;
            case TOPICS -> (long) groups * count;
            case STREAMS -> (long) groups * (count + 1);
            case MIXED -> (long) groups * (count + 1) + stalled + (long) dataTopics * DATA_CLIENTS + 1 + FILE_RECEIVERS;
            case SLOW -> count + 2L;
            default -> count + 1L;
        };
    }

    /**
     * When sender {@code i} of a part's {@code n} starts, after the run's clock: at once, or with
     * the phases spread evenly over one period of the part's rate, the same phases for every relay
     * compared.
     */
    long startDelayNanos(Part part, int i, int n) {
        if (!spreadPhases || part.rate() <= 0) {
            return 0;
        }
        return (long) (1e9 / part.rate() * i / n);
    }

    List<Part> parts() {
        return parts;
    }

    /** Every group of every part, in the order they connect. */
    List<Group> groups() {
        List<Group> all = new ArrayList<>();
        for (Part p : parts) {
            all.addAll(p.groups());
        }
        return Collections.unmodifiableList(all);
    }

    /**
     * Whether paced senders start spread over their period (a campus: cameras and sensors are not
     * in step) rather than all at once (the single-topic scenarios, as they always have).
     */
    boolean spreadPhases() {
        return spreadPhases;
    }
}
