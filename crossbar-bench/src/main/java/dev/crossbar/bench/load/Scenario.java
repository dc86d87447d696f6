package dev.crossbar.bench.load;

import java.util.Locale;

/**
 * What a run does, with each scenario's defaults (any of them can be overridden by a flag).
 *
 * <ul>
 *   <li>{@code pingpong}: one publisher, one subscriber, small messages, as fast as the window allows.
 *   <li>{@code large}: the same with 1 MiB messages.
 *   <li>{@code fanout}: one publisher, N subscribers; paced (video-like 4,600 B at 30/s) or, with
 *       {@code --rate 0}, as fast as the window allows.
 *   <li>{@code mesh}: K clients on one N:N topic, each sending at a rate; each hears the other K-1.
 *   <li>{@code slow}: fanout plus one subscriber that stops reading its socket after connecting.
 *   <li>{@code idle}: C connections that send nothing; reports the relay's memory per connection.
 * </ul>
 *
 * A campus's shapes of load, many small groups at once, each sender paced, their phases spread
 * and connections opened at a bounded rate ({@link Plan} lays them out):
 *
 * <ul>
 *   <li>{@code streams}: G cameras, each a 1:N stream to N viewers (200 x 4, 30 x 4,600 B/s each).
 *   <li>{@code topics}: G small N:N data topics of K clients each (1,000 x 2, 10 x 200 B/s each).
 *   <li>{@code mixed}: at once, video streams with viewers and one stalled reader, data topics,
 *       and one lossless file transfer of 1 MiB messages; reported per part.
 * </ul>
 */
enum Scenario {
    //        size       count  rate  window groups connects/s
    PINGPONG(64,              1,    0,    128,    1,     0),
    LARGE(1024 * 1024,        1,    0,      2,    1,     0),
    FANOUT(4600,            100,   30,      0,    1,     0),
    MESH(256,                10,  100,      0,    1,     0),
    SLOW(4600,               10, 2000,      0,    1,     0),
    IDLE(0,                1000,    0,      0,    1,     0),
    STREAMS(4600,             4,   30,      0,  200,  1000),
    TOPICS(200,               2,   10,      0, 1000,  1000),
    MIXED(4600,               4,   30,      0,   50,  1000);

    /** Default message size in bytes (0: sends none); mixed: its video streams'. */
    final int size;
    /**
     * Default subscribers (fanout, slow), clients (mesh) or connections (idle); viewers per
     * stream (streams, mixed's video) or clients per topic (topics).
     */
    final int count;
    /** Default messages per second per sender; 0 is as fast as the window allows. */
    final double rate;
    /** Default in-flight window; 0 is none (then {@code --rate 0} gets {@link #AS_FAST_AS_POSSIBLE_WINDOW}). */
    final int window;
    /** Default streams (streams, mixed's video) or topics (topics); 1 for the single-topic scenarios. */
    final int groups;
    /** Default connections opened per second; 0 is as fast as {@link BenchClient#MAX_PENDING_HANDSHAKES} allow. */
    final double connectRate;

    /** Window of an as-fast-as-possible sender when none is given: enough to keep the pipe full. */
    static final int AS_FAST_AS_POSSIBLE_WINDOW = 64;

    Scenario(int size, int count, double rate, int window, int groups, double connectRate) {
        this.size = size;
        this.count = count;
        this.rate = rate;
        this.window = window;
        this.groups = groups;
        this.connectRate = connectRate;
    }

    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether the scenario sends messages (all but idle). */
    boolean sends() {
        return this != IDLE;
    }

    /**
     * A campus's shape: many groups, paced senders whose phases are spread over their period.
     * The single-topic scenarios start every sender at once, as they always have, so their
     * figures stay comparable with earlier runs.
     */
    boolean campus() {
        return this == STREAMS || this == TOPICS || this == MIXED;
    }

    /** Whether each group is an N:N topic whose clients all send and hear the others. */
    boolean manyToMany() {
        return this == MESH || this == TOPICS;
    }

    /**
     * The streams a relay's back-pressure rule ({@code --slow backpressure}) covers: every stream,
     * or in mixed only the file transfer's, so its video viewers (and its stalled reader) and its
     * data topics keep the relay's default.
     */
    String backpressurePattern() {
        return this == MIXED ? Plan.FILE_PATTERN : SlowPolicy.ALL_STREAMS;
    }
}
