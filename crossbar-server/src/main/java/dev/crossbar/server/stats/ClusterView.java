package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.stats.ClusterSnapshot.ClusterTopic;
import dev.crossbar.server.stats.ClusterSnapshot.NodeTopic;
import dev.crossbar.server.stats.ClusterSnapshot.NodeView;
import dev.crossbar.server.stats.Snapshot.Flow;
import dev.crossbar.server.stats.Snapshot.Members;
import dev.crossbar.server.stats.Snapshot.TopicView;
import dev.crossbar.server.stats.Snapshot.Totals;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What this node knows of the others, and the merge of their summaries with its own.
 *
 * <p>A node is known from its first answer on; from then on, a round it does not answer in time marks
 * it missing (shown with when it last answered), never left out. Missing nodes are remembered until
 * this node restarts, up to {@link #MAX_NODES}.
 *
 * <p>Confined to the stats thread, as the {@link Snapshotter} is. The merge walks topic summaries only:
 * its cost grows with nodes times topics, not with connections.
 */
final class ClusterView {

    /** Nodes remembered at once; answers from more are ignored (and logged by the caller). */
    static final int MAX_NODES = 256;

    static final String UP = "up";
    static final String MISSING = "missing";

    private final String self;
    private final Map<String, Peer> peers = new TreeMap<>();

    private static final class Peer {
        PeerMessages.Reply last;
        Instant lastSeen;
        boolean up;
    }

    ClusterView(String self) {
        this.self = requireNonNull(self, "self");
    }

    /** Nodes known besides this one. */
    int knownPeers() {
        return peers.size();
    }

    /**
     * Folds in one round of summaries; a known node without a reply in it is missing from now on.
     *
     * @param asked when the round's request was sent: what a reply proves is that its node was up then
     * @return replies that could not be read or were ignored (for the caller's log)
     */
    int update(List<byte[]> replies, Instant asked) {
        int ignored = 0;
        Set<String> answered = new HashSet<>();
        for (byte[] data : replies) {
            PeerMessages.Reply r = PeerMessages.reply(data);
            if (r == null || r.node().equals(self) || (!peers.containsKey(r.node()) && peers.size() >= MAX_NODES)) {
                ignored++;
                continue;
            }
            Peer p = peers.computeIfAbsent(r.node(), n -> new Peer());
            p.last = r;
            // Rounds may overlap (a reader's request and the tick): never move backwards.
            if (p.lastSeen == null || asked.isAfter(p.lastSeen)) {
                p.lastSeen = asked;
            }
            p.up = true;
            answered.add(r.node());
        }
        for (Map.Entry<String, Peer> e : peers.entrySet()) {
            if (!answered.contains(e.getKey())) {
                e.getValue().up = false;
            }
        }
        return ignored;
    }

    /** Up nodes whose last summary lists this topic: those worth asking for its client rows. */
    List<String> nodesWith(String topic, String schema) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Peer> e : peers.entrySet()) {
            if (e.getValue().up) {
                for (TopicView t : e.getValue().last.snapshot().topics()) {
                    if (t.topic().equals(topic) && t.schema().equals(schema)) {
                        out.add(e.getKey());
                        break;
                    }
                }
            }
        }
        return out;
    }

    /** This node's snapshot merged with the last summaries of the nodes that are up. */
    ClusterSnapshot merge(Snapshot local, String clientDetails) {
        List<NodeView> nodes = new ArrayList<>();
        nodes.add(new NodeView(local.node(), UP, local.startedAt(), local.time(), local.uptimeSeconds(), local.totals(), 0));
        List<Snapshot> up = new ArrayList<>();
        up.add(local);
        for (Map.Entry<String, Peer> e : peers.entrySet()) {
            Peer p = e.getValue();
            Snapshot s = p.last.snapshot();
            if (p.up) {
                up.add(s);
                nodes.add(new NodeView(e.getKey(), UP, s.startedAt(), p.lastSeen.toString(), s.uptimeSeconds(),
                        s.totals(), p.last.omittedTopics()));
            } else {
                nodes.add(new NodeView(e.getKey(), MISSING, p.lastSeen.toString(), p.lastSeen.toString(), null, null, 0));
            }
        }
        // Topics keyed by schema and display name, in the order of the first node that has them
        // (each node's list is sorted, so the merge is sorted too once re-sorted below).
        Map<String, List<NodeTopic>> byTopic = new TreeMap<>();
        Map<String, TopicView> first = new LinkedHashMap<>();
        int connections = 0;
        int statsSockets = 0;
        long messagesIn = 0;
        long bytesIn = 0;
        long messagesOut = 0;
        long bytesOut = 0;
        long dropped = 0;
        long refused = 0;
        for (Snapshot s : up) {
            Totals t = s.totals();
            connections += t.connections();
            statsSockets += t.statsSockets();
            messagesIn += t.messagesIn();
            bytesIn += t.bytesIn();
            messagesOut += t.messagesOut();
            bytesOut += t.bytesOut();
            dropped += t.dropped();
            refused += t.refused();
            for (TopicView tv : s.topics()) {
                String key = tv.topic() + '\u0000' + tv.schema();
                first.putIfAbsent(key, tv);
                byTopic.computeIfAbsent(key, k -> new ArrayList<>()).add(new NodeTopic(s.node(), tv.createdAt(),
                        tv.members(), tv.in(), tv.out(), tv.dropped(), tv.refused()));
            }
        }
        List<ClusterTopic> topics = new ArrayList<>(byTopic.size());
        for (Map.Entry<String, List<NodeTopic>> e : byTopic.entrySet()) {
            TopicView tv = first.get(e.getKey());
            List<NodeTopic> rows = e.getValue();
            int pub = 0;
            int sub = 0;
            int mem = 0;
            long d = 0;
            long r = 0;
            List<Flow> ins = new ArrayList<>(rows.size());
            List<Flow> outs = new ArrayList<>(rows.size());
            for (NodeTopic nt : rows) {
                pub += nt.members().publisher();
                sub += nt.members().subscriber();
                mem += nt.members().member();
                d += nt.dropped();
                r += nt.refused();
                ins.add(nt.in());
                outs.add(nt.out());
            }
            topics.add(new ClusterTopic(tv.topic(), tv.name(), tv.schema(), new Members(pub, sub, mem), sum(ins), sum(outs),
                    d, r, tv.stream(), List.copyOf(rows)));
        }
        Totals totals = new Totals(connections, topics.size(), statsSockets, messagesIn, bytesIn, messagesOut, bytesOut,
                dropped, refused);
        return new ClusterSnapshot(ClusterSnapshot.SCOPE, local.node(), local.time(), local.intervalSeconds(), clientDetails,
                nodes, totals, topics, null);
    }

    /** Flows added up: counts and rates summed, mean size recomputed, the most recent message kept. */
    static Flow sum(List<Flow> flows) {
        long messages = 0;
        long bytes = 0;
        double rate = 0;
        double byteRate = 0;
        Double last = null;
        for (Flow f : flows) {
            messages += f.messages();
            bytes += f.bytes();
            rate += f.rate();
            byteRate += f.byteRate();
            if (f.lastSeconds() != null && (last == null || f.lastSeconds() < last)) {
                last = f.lastSeconds();
            }
        }
        return new Flow(messages, bytes, Math.round(rate * 1000) / 1000.0, Math.round(byteRate * 1000) / 1000.0,
                messages == 0 ? 0 : Math.round((double) bytes / messages), last);
    }
}
