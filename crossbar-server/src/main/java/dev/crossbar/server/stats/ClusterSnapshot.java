package dev.crossbar.server.stats;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.crossbar.server.stats.Snapshot.ClientView;
import dev.crossbar.server.stats.Snapshot.Flow;
import dev.crossbar.server.stats.Snapshot.Members;
import dev.crossbar.server.stats.Snapshot.Totals;
import java.util.List;
import java.util.Map;

/**
 * The cluster view, as {@code /ws?scope=cluster} sends it: every node's topics merged, a row per
 * node under each topic, totals across nodes, and every node this one knows of with its state. Client
 * rows are not part of it (100k of them would not fit in one message); a reader asks for one topic's
 * at a time ({@link Clients}). The JSON form is documented in {@code docs/protocol.md}.
 *
 * @param scope always {@code cluster}, to tell it from a node's own {@link Snapshot}
 * @param node the node that merged it
 * @param nodes every node known, this one first, then by name
 * @param totals sums over the nodes that answered ({@code topics}: distinct topics)
 * @param topics every topic on any node that answered, with its per-node rows
 * @param trends in the first view a socket gets only: as {@link Snapshot#trends()}, of the topics' sums
 */
public record ClusterSnapshot(String scope, String node, String time, double intervalSeconds, String clientDetails,
                              List<NodeView> nodes, Totals totals, List<ClusterTopic> topics,
                              @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, TopicTrends.Trend> trends) {

    /** The same view for a reader at {@code details}, with {@code t} as its trends (null: none). */
    ClusterSnapshot forReader(String details, Map<String, TopicTrends.Trend> t) {
        return new ClusterSnapshot(scope, node, time, intervalSeconds, details, nodes, totals, topics, t);
    }

    public static final String SCOPE = "cluster";

    /**
     * One node as the merging node sees it.
     *
     * @param state {@code up} (answered this round) or {@code missing} (known, but silent this round)
     * @param since when the node started, if up; when it last answered, if missing
     * @param lastSeen when it last answered
     * @param uptimeSeconds as the node reported it; null if missing
     * @param totals its own totals, as last reported; null if missing
     * @param omittedTopics topics its reply left out to stay within the reply bound
     */
    public record NodeView(String node, String state, String since, String lastSeen, Double uptimeSeconds,
                           Totals totals, int omittedTopics) {
    }

    /**
     * One topic across nodes: {@code members}, {@code in}, {@code out} are sums over {@code nodes};
     * {@code stream} is its routing rule as the first node that has it reports it (rules are per node).
     */
    public record ClusterTopic(String topic, String name, String schema, Members members, Flow in, Flow out,
                               long dropped, long refused, Snapshot.StreamView stream, List<NodeTopic> nodes) {
    }

    /** One topic on one node. */
    public record NodeTopic(String node, String createdAt, Members members, Flow in, Flow out, long dropped,
                            long refused) {
    }

    /**
     * One topic's client rows from every node that has it ({@code type} {@code clients}), the answer
     * to {@code {"topic":...,"schema":...}} on a cluster socket.
     *
     * @param missing nodes that have the topic but did not answer in time
     * @param omitted rows left out by nodes to stay within the reply bound
     */
    public record Clients(String scope, String type, String topic, String schema, String clientDetails,
                          List<ClientView> clients, List<String> missing, int omitted) {
    }
}
