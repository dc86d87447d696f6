package dev.crossbar.bench.soak;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A fresh node met by all its clients at once, round after round: cameras and their viewers (the
 * JDK's client) connect together to a node just started, stream for a few seconds, and the node is
 * killed. Every message is checked whole, as in the {@link Soak}. With {@code --nats} a second node
 * that stays up has a viewer of each camera too, its streams coming over NATS, and keeps them: each
 * round adds one per camera there, so that node and the JDK's client get busier round by round.
 * With {@code --raw-viewers} each camera also has a {@link RawViewer} on each node, reading the
 * same frames with a plain socket (one per camera and node each round, closed at its end).
 *
 * <p>What it was built for: the soak's viewers saw a few video messages that were not as sent. Run
 * as below, the JDK's viewers on the second node saw 8 such messages in 20 rounds, the raw viewers
 * of the same streams none of 308,745; each was the JDK's client dropping exactly 32 KiB of its
 * connection's byte stream. The soak's viewers read with {@link RawViewer} since. The exit code is
 * 1 when a raw viewer saw a message not as sent: the relay's fault, not a client's.
 *
 * <pre>
 * java -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.soak.Storm --nats --raw-viewers --rounds 20
 * </pre>
 */
@Command(name = "storm", mixinStandardHelpOptions = true, description = "Clients storming a fresh node, round after round.")
public final class Storm implements Callable<Integer> {

    @Option(names = "--rounds", defaultValue = "20", description = "Node starts (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--seconds", defaultValue = "6", description = "Traffic per round (default ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--cameras", defaultValue = "40", description = "Video streams (default ${DEFAULT-VALUE}).")
    int cameras;

    @Option(names = "--viewers", defaultValue = "3", description = "JDK viewers per camera on the fresh node (default ${DEFAULT-VALUE}).")
    int viewers;

    @Option(names = "--jar", defaultValue = "crossbar-server/target/crossbar.jar", description = "The relay's fat jar (default ${DEFAULT-VALUE}).")
    Path jar;

    @Option(names = "--out", defaultValue = "storm-results", description = "Directory for logs and corrupt messages (default ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--rule", defaultValue = "start=keyframe,max-latency=500ms", description = "The cameras' stream rule.")
    String rule;

    @Option(names = "--nats", description = "Two nats-servers and a second node that stays up, with a viewer of each camera.")
    boolean nats;

    @Option(names = "--raw-viewers", description = "Beside each camera's JDK viewers, one more on a plain socket (and on the peer too).")
    boolean rawViewers;

    @Option(names = "--node-option", description = "A relay option added to the node's (repeatable).")
    List<String> nodeOptions = new ArrayList<>();

    @Option(names = "--node-jvm-option", description = "A JVM option added to the node's (repeatable).")
    List<String> nodeJvmOptions = new ArrayList<>();

    public static void main(String[] args) {
        System.exit(new CommandLine(new Storm()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Files.createDirectories(out);
        int port = NatsPair.freePorts(1).get(0);
        List<String> flags = new ArrayList<>(List.of("--route", "/cam/**:" + rule));
        flags.addAll(nodeOptions);
        long corrupt = 0;
        long rawCorrupt = 0;
        NatsPair pair = null;
        Node peer = null;
        try (PrintWriter events = new PrintWriter(Files.newBufferedWriter(out.resolve("events.log")))) {
            if (nats) {
                pair = new NatsPair(out, "nats-server");
                List<String> peerFlags = new ArrayList<>(flags);
                peerFlags.addAll(List.of("--nats", pair.url(1) + "," + pair.url(0)));
                flags.addAll(List.of("--nats", pair.url(0) + "," + pair.url(1)));
                peer = new Node(out, "peer", NatsPair.freePorts(1).get(0), jar, nodeJvmOptions, peerFlags);
                peer.start();
            }
            for (int round = 0; round < rounds; round++) {
                Node node = new Node(out, "node", port, jar, nodeJvmOptions, flags);
                node.start();
                Path dumps = Files.createDirectories(out.resolve("round-" + round));
                Soak.Cluster c = new Soak.Cluster(peer == null ? new Node[] {node} : new Node[] {node, peer}, events, dumps);
                Ledger ledger = c.ledger();
                List<Member> cams = new ArrayList<>();
                List<Member> all = new ArrayList<>();
                List<Member> onFreshNode = new ArrayList<>();
                for (int i = 0; i < cameras; i++) {
                    Member cam = new Member("camera", i, c, 0, "/in/cam/c" + i, null, Long.MAX_VALUE, false);
                    cams.add(cam);
                    onFreshNode.add(cam);
                    for (int j = 0; j < viewers; j++) {
                        onFreshNode.add(new Member("viewer", i, c, 0, "/out/cam/c" + i,
                                n -> new LiveTracker(ledger, ledger.video, n), Long.MAX_VALUE, false));
                    }
                    if (peer != null) {
                        all.add(new Member("viewer", i, c, 1, "/out/cam/c" + i,
                                n -> new LiveTracker(ledger, ledger.video, n), Long.MAX_VALUE, false));
                    }
                }
                all.addAll(onFreshNode);
                ExecutorService connecting = Executors.newFixedThreadPool(32, Soak.daemons("storm-connect"));
                for (Member m : all) {
                    connecting.execute(m::connect);
                }
                List<RawViewer> raws = new ArrayList<>();
                if (rawViewers) {
                    for (int i = 0; i < cameras; i++) {
                        for (int n = 0; n < c.nodeCount(); n++) {
                            raws.add(new RawViewer(c.node(n).ws("/out/cam/c" + i), new LiveTracker(ledger, ledger.rawVideo, n),
                                    Long.MAX_VALUE));
                        }
                    }
                }
                ScheduledExecutorService senders = Executors.newScheduledThreadPool(4, Soak.daemons("storm-sender"));
                for (int i = 0; i < cams.size(); i++) {
                    Member cam = cams.get(i);
                    senders.scheduleAtFixedRate(() -> cam.sendVideo(ledger.video),
                            i * Traffic.VIDEO_EVERY_MICROS / cams.size(), Traffic.VIDEO_EVERY_MICROS, TimeUnit.MICROSECONDS);
                }
                Thread.sleep(seconds * 1000L);
                c.stop();
                senders.shutdownNow();
                connecting.shutdownNow();
                node.kill();
                c.timer().shutdownNow();
                for (Member m : onFreshNode) {
                    m.leaveAndReturn(0); // stopped: it does not come back
                }
                for (RawViewer r : raws) {
                    r.abort();
                }
                corrupt += ledger.video.corrupt.get();
                rawCorrupt += ledger.rawVideo.corrupt.get();
                c.log(String.format("round %d: %d frames sent; JDK viewers %d received, %d corrupt (%d in all);"
                                + " raw viewers %d received, %d corrupt (%d in all)",
                        round, ledger.video.sent.get(), ledger.video.received.get(), ledger.video.corrupt.get(), corrupt,
                        ledger.rawVideo.received.get(), ledger.rawVideo.corrupt.get(), rawCorrupt));
                for (String s : ledger.corruptSamples()) {
                    c.log("  " + s);
                }
            }
        } finally {
            if (peer != null) {
                peer.close();
            }
            if (pair != null) {
                pair.close();
            }
        }
        return rawCorrupt == 0 ? 0 : 1;
    }
}
