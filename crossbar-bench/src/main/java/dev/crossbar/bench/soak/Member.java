package dev.crossbar.bench.soak;

import java.net.URI;
import java.net.http.HttpClient;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * A soak client that stays: it connects to its node, and whenever its connection ends (the node
 * died, the relay closed it, or it left on purpose) it connects again a second later, as the
 * examples' clients do, until the soak ends. A sender numbers its messages per connection
 * ({@link #epoch}), so a receiver tells a new connection from a hole.
 */
final class Member {

    private static final long RECONNECT_MILLIS = 1000;

    private final String role;
    private final int stream;
    private final Soak.Cluster cluster;
    private final String path;
    private final IntFunction<Ws.Sink> sinkForNode;
    private final long reads;
    /** Reads with a {@link RawViewer} (a viewer, which never sends) rather than the JDK's client. */
    private final boolean raw;
    private volatile int node;
    private volatile Client client;
    private volatile int epoch;
    private long seq;

    /**
     * @param sinkForNode what receives its messages, given the node it is on; null for a sender only
     * @param reads       messages read before it stops reading (a stalled viewer), else Long.MAX_VALUE
     * @param raw         a viewer read with a {@link RawViewer}
     */
    Member(String role, int stream, Soak.Cluster cluster, int node, String path, IntFunction<Ws.Sink> sinkForNode,
           long reads, boolean raw) {
        this.role = role;
        this.stream = stream;
        this.cluster = cluster;
        this.node = node;
        this.path = path;
        this.sinkForNode = sinkForNode;
        this.reads = reads;
        this.raw = raw;
    }

    void connect() {
        if (!cluster.running()) {
            return;
        }
        int on = node;
        Ws.Sink sink = sinkForNode == null ? (payload, text) -> { } : sinkForNode.apply(on);
        try {
            URI uri = cluster.node(on).ws(path);
            Client w = raw ? new RawViewer(uri, sink, reads) : Ws.connect(cluster.http(), uri, sink, reads);
            synchronized (this) {
                epoch++;
                seq = 0;
                client = w;
            }
            w.ended().thenAccept(e -> {
                if (!e.reason().equals("aborted by the client")) {
                    cluster.ledger().ended(role, e);
                }
                later(RECONNECT_MILLIS);
            });
        } catch (Exception e) {
            later(RECONNECT_MILLIS);
        }
    }

    private void later(long millis) {
        ScheduledExecutorService timer = cluster.timer();
        if (cluster.running()) {
            timer.schedule(this::connect, millis, TimeUnit.MILLISECONDS);
        }
    }

    /** Leaves (drops its connection without a close, as a closed laptop) and comes back on {@code toNode}. */
    void leaveAndReturn(int toNode) {
        node = toNode;
        Client w = client;
        if (w != null && w.open()) {
            w.abort();
        }
    }

    /** Sends one video frame, if connected; a failed send is left to the reconnect. */
    void sendVideo(Ledger.Flow flow) {
        send(flow, false);
    }

    /** Sends one data text, if connected. */
    void sendData(Ledger.Flow flow) {
        send(flow, true);
    }

    private void send(Ledger.Flow flow, boolean text) {
        Ws w;
        Label l;
        synchronized (this) {
            if (!(client instanceof Ws c) || !c.open()) {
                return;
            }
            w = c;
            l = new Label(stream, epoch, seq);
        }
        try {
            if (text) {
                w.sendText(DataTexts.text(l));
            } else {
                w.sendBinary(VideoFrames.frame(l));
            }
        } catch (Exception broken) {
            return; // its node died or froze: the connection's end reconnects it
        }
        synchronized (this) {
            if (client == w) {
                seq++;
            }
        }
        flow.sent.incrementAndGet();
    }
}
