package dev.crossbar.bench.load;

import java.net.URI;

/** The relay under test: where it listens, and (if known) its process, for CPU and memory readings. */
interface Relay extends AutoCloseable {

    /** {@code ws://host:port}, with no path: scenarios append {@code /in/<t>}, {@code /out/<t>}, ... */
    URI baseUri();

    /** The relay's process id, or -1 when it shares this process or is not known. */
    long pid();

    /** How the relay runs: external, spawned or in-process. */
    String kind();

    /**
     * For a relay this tool started: "own" if it runs in its own session (and so, with autogroup,
     * its own scheduling group), "inherit" if in this tool's; null for a relay it did not start.
     */
    default String session() {
        return null;
    }

    /**
     * What is known of the relay when a run against it fails, to be appended to the run's error
     * (for a relay this tool started: alive or its exit status, and the end of its output); empty
     * when nothing is known.
     */
    default String stateAfterFailure() {
        return "";
    }

    /** Live heap after a full collection, in bytes, or -1 where it cannot be read (not a JVM). */
    long liveHeapBytes();

    @Override
    void close();
}
