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
 */
enum Scenario {
    //        size       receivers rate  window
    PINGPONG(64,              1,    0,    128),
    LARGE(1024 * 1024,        1,    0,      2),
    FANOUT(4600,            100,   30,      0),
    MESH(256,                10,  100,      0),
    SLOW(4600,               10, 2000,      0),
    IDLE(0,                1000,    0,      0);

    /** Default message size in bytes (0: sends none). */
    final int size;
    /** Default subscribers (fanout, slow), clients (mesh) or connections (idle). */
    final int count;
    /** Default messages per second per sender; 0 is as fast as the window allows. */
    final double rate;
    /** Default in-flight window; 0 is none (then {@code --rate 0} gets {@link #AS_FAST_AS_POSSIBLE_WINDOW}). */
    final int window;

    /** Window of an as-fast-as-possible sender when none is given: enough to keep the pipe full. */
    static final int AS_FAST_AS_POSSIBLE_WINDOW = 64;

    Scenario(int size, int count, double rate, int window) {
        this.size = size;
        this.count = count;
        this.rate = rate;
        this.window = window;
    }

    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether the scenario sends messages (all but idle). */
    boolean sends() {
        return this != IDLE;
    }
}
