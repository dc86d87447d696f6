package dev.crossbar.bench.soak;

/**
 * The soak's faults, one at a time, in turn: what a campus's NATS servers and relay hosts suffer.
 * A server or node killed is started again 5 s later on the same ports; a frozen server is thawed
 * after {@value #FREEZE_SECONDS} s, past three of the nodes' NATS pings (every 10 s by default), so the
 * nodes give it up and move to the other.
 */
final class Faults {

    static final int FREEZE_SECONDS = 40;
    private static final int DOWN_SECONDS = 5;

    private final Soak.Cluster cluster;
    private final NatsPair nats;
    private final double lastMinute;
    private int next;

    Faults(Soak.Cluster cluster, NatsPair nats, double lastMinute) {
        this.cluster = cluster;
        this.nats = nats;
        this.lastMinute = lastMinute;
    }

    /** Inflicts the next fault of the list (none in the soak's last minutes: what it did must show first). */
    void next() {
        if (cluster.minutes() > lastMinute) {
            return;
        }
        int kind = next++ % 6;
        try {
            switch (kind) {
                case 0 -> killNats(0);
                case 1 -> freezeNats(1);
                case 2 -> killNode(0);
                case 3 -> killNats(1);
                case 4 -> freezeNats(0);
                default -> killNode(1);
            }
        } catch (Exception e) {
            cluster.log("fault " + kind + " failed: " + e);
        } catch (Throwable t) {
            cluster.log("fault " + kind + " failed: " + t);
            throw t;
        }
    }

    private void killNats(int i) throws Exception {
        cluster.log("fault: SIGKILL nats-" + i + " (pid " + nats.pid(i) + "), started again " + DOWN_SECONDS + " s later");
        nats.kill(i);
        Thread.sleep(DOWN_SECONDS * 1000L);
        nats.start(i);
        cluster.log("fault over: nats-" + i + " up again (pid " + nats.pid(i) + ")");
    }

    private void freezeNats(int i) throws Exception {
        cluster.log("fault: SIGSTOP nats-" + i + " for " + FREEZE_SECONDS + " s");
        nats.freeze(i);
        try {
            Thread.sleep(FREEZE_SECONDS * 1000L);
        } finally {
            nats.thaw(i);
        }
        cluster.log("fault over: nats-" + i + " thawed (SIGCONT)");
    }

    private void killNode(int i) throws Exception {
        Node n = cluster.node(i);
        cluster.log("fault: SIGKILL " + n.name + " (pid " + n.pid() + "), started again " + DOWN_SECONDS + " s later");
        n.kill();
        Thread.sleep(DOWN_SECONDS * 1000L);
        n.start();
        cluster.log("fault over: " + n.name + " up again (pid " + n.pid() + ")");
    }
}
