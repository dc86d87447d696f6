package dev.crossbar.bench.load;

import java.net.URI;

/** A relay someone else started: measured at its URL, and sampled if its pid was given. */
final class ExternalRelay implements Relay {

    private final URI baseUri;
    private final long pid;

    ExternalRelay(URI baseUri, long pid) {
        this.baseUri = baseUri;
        this.pid = pid;
    }

    @Override
    public URI baseUri() {
        return baseUri;
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public String kind() {
        return "external";
    }

    @Override
    public long liveHeapBytes() {
        return pid > 0 ? JvmHeap.liveHeapBytes(pid) : -1;
    }

    @Override
    public void close() {
        // Not ours to stop.
    }
}
