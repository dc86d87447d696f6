package dev.crossbar.server.stats;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * One statistics snapshot, as sent on the stats socket; its JSON form is documented in
 * {@code docs/protocol.md} ("Statistics"). Field names are the JSON names.
 *
 * @param node the relay's host name
 * @param time when the snapshot was taken (ISO-8601, UTC)
 * @param startedAt when the relay started
 * @param uptimeSeconds seconds since the relay started
 * @param intervalSeconds how often the socket pushes a snapshot; rates are measured over about this long
 * @param totals relay-wide counts
 * @param topics every live topic
 * @param clientDetails {@code truncated} (addresses to /24 or /48, user agents to the product name) or {@code full}
 * @param clustered whether this node is one of a cluster ({@code --nats}): {@code /ws?scope=cluster} shows them all
 * @param clients every relay connection (stats sockets are not listed); in a reply to another node,
 *                only those of the topic asked for
 * @param trends in the first snapshot a socket gets only (otherwise absent): each topic's message rate
 *               in and bytes out per second at the last ticks, by {@code "<schema> <topic>"}
 * @param sessions this node's {@code schema=session} streams with a host or a session (absent when none;
 *                 never in the cluster view): counts, ages and traffic, never content
 */
public record Snapshot(String node, String time, String startedAt, double uptimeSeconds, double intervalSeconds,
                       String clientDetails, boolean clustered, Totals totals, List<TopicView> topics,
                       List<ClientView> clients,
                       @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, TopicTrends.Trend> trends,
                       @JsonInclude(JsonInclude.Include.NON_EMPTY) List<SessionStreamView> sessions) {

    /** The same snapshot with other client rows, shown at {@code clientDetails}. */
    Snapshot withClients(List<ClientView> rows, String details) {
        return new Snapshot(node, time, startedAt, uptimeSeconds, intervalSeconds, details, clustered, totals, topics, rows,
                trends, sessions);
    }

    /** The same snapshot without the sessions: other nodes' views have no use for them. */
    Snapshot withoutSessions() {
        return new Snapshot(node, time, startedAt, uptimeSeconds, intervalSeconds, clientDetails, clustered, totals, topics,
                clients, trends, null);
    }

    /** The same snapshot with the topics' trends. */
    Snapshot withTrends(Map<String, TopicTrends.Trend> t) {
        return new Snapshot(node, time, startedAt, uptimeSeconds, intervalSeconds, clientDetails, clustered, totals, topics,
                clients, t, sessions);
    }

    /**
     * One {@code schema=session} stream on this node (docs/protocol.md, "1:1 sessions").
     *
     * @param stream the stream's name as rules write it ({@code /shell/exp1})
     * @param hosts hosts connected to its {@code /in/} path here
     * @param waiting sessions offered to a host that has not opened them yet
     * @param open the sessions open now, whose client is on this node, oldest first
     */
    public record SessionStreamView(String stream, int hosts, int waiting, List<SessionView> open) {
    }

    /**
     * One open 1:1 session: how long since its host opened it and what has crossed each way (whole
     * messages and their payload bytes). Nothing that was said, and not who: the session's path is its
     * host's credential and is never shown.
     */
    public record SessionView(double ageSeconds, long messagesToHost, long bytesToHost, long messagesToClient,
                              long bytesToClient) {
    }

    /**
     * Relay-wide counts: live connections, topics and stats sockets, and traffic since start
     * (connections that have left included).
     */
    public record Totals(int connections, int topics, int statsSockets, long messagesIn, long bytesIn,
                         long messagesOut, long bytesOut, long dropped, long refused) {
    }

    /**
     * Traffic one way. {@code in} is client to relay, {@code out} relay to client.
     *
     * @param messages whole messages since connect (for a topic: since it was created)
     * @param bytes payload bytes, without WebSocket framing
     * @param rate messages per second over the last window
     * @param byteRate payload bytes per second over the last window
     * @param meanSize mean message size in bytes since connect (0 if none)
     * @param lastSeconds seconds since the last message, or null if there has been none
     */
    public record Flow(long messages, long bytes, double rate, double byteRate, long meanSize, Double lastSeconds) {
    }

    /** Members of a topic by role. */
    public record Members(int publisher, int subscriber, int member) {
    }

    /**
     * One topic.
     *
     * @param topic display name, as the original crossbar showed it: {@code /out/<t>} for a 1:N stream, the path for N:N
     * @param name the topic's name: the stream name for 1:N, the path for N:N
     * @param schema {@code 1:n} or {@code n:n}
     * @param dropped messages its receivers did not get because they were too slow
     * @param refused messages sent by members whose role may not send
     * @param stream the options its routing rule gives it
     */
    public record TopicView(String topic, String name, String schema, String createdAt, Members members,
                            Flow in, Flow out, long dropped, long refused, StreamView stream) {
    }

    /**
     * A topic's stream options (docs/protocol.md, "Stream rules").
     *
     * @param rule the rule it follows as written ({@code /cam/*:start=keyframe}), or null: no rule
     *             matched and it has the defaults
     * @param source where that rule was given ({@code --route #1}, {@code routes.conf:4})
     * @param start {@code live}, {@code keyframe} or {@code last}
     * @param maxLatencyMs the {@code max-latency} bound, or null
     * @param held what it keeps for newcomers now (messages, bytes; for video the stream's format and
     *             the current group of pictures), or null when it keeps nothing
     * @param slow {@code drop} or {@code backpressure}
     * @param heldBackSeconds for {@code slow=backpressure}: how long its senders have been held back in
     *             all; null for other streams
     * @param heldBackBy for {@code slow=backpressure}: per connection id present, how long it has held
     *             the senders back (seconds); null for other streams
     */
    public record StreamView(String rule, String source, String start, Long maxLatencyMs, Map<String, Object> held,
                             String slow, Double heldBackSeconds, Map<String, Double> heldBackBy) {
    }

    /** The original crossbar's per-direction stats: time since last message, mean size, messages per second. */
    public record LegacyFlow(String last, long size, double fps) {
    }

    /** The original crossbar's {@code stats}: {@code tx} is client to relay, {@code rx} relay to client. */
    public record LegacyStats(LegacyFlow tx, LegacyFlow rx) {
    }

    /**
     * One relay connection. The first six fields are the original crossbar's, with its formats;
     * the rest are Crossbar's.
     *
     * @param topic as {@link TopicView#topic()}
     * @param broadcaster whether this client's messages are relayed (false for a 1:N subscriber)
     * @param connected connect time in the original's format ({@code 2006-01-02 15:04:05.999 +0000 UTC})
     * @param remoteAddr the client's address (from {@code X-Forwarded-For} only if the relay trusts it);
     *                   truncated to its /24 or /48 unless the snapshot's {@code clientDetails} is {@code full}
     * @param userAgent the upgrade request's {@code User-Agent}, raw: display it as text, never as HTML; cut to
     *                  its product name unless {@code clientDetails} is {@code full}
     * @param stats the original's rate block
     * @param id this connection's id, unique while it lasts
     * @param path the path it connected to, e.g. {@code /in/cam}
     * @param role {@code publisher}, {@code subscriber} or {@code member}
     * @param connectedAt connect time, ISO-8601 UTC
     * @param connectedSeconds seconds since connect
     * @param dropped messages meant for this client that it did not get (slow consumer)
     * @param refused messages this client sent that were not relayed (its role may not send)
     * @param node the node the client is connected to
     * @param sub the subject of the client's token (who the identity provider says it is); only in the
     *            {@code full} view (an administrator's), absent otherwise and without a token
     * @param jti the id of the client's token, what an administrator revokes; as {@code sub}
     */
    public record ClientView(String topic, boolean broadcaster, String connected, String remoteAddr, String userAgent,
                             LegacyStats stats, String id, String path, String schema, String role,
                             String connectedAt, double connectedSeconds, Flow in, Flow out, long dropped, long refused,
                             String node, @JsonInclude(JsonInclude.Include.NON_NULL) String sub,
                             @JsonInclude(JsonInclude.Include.NON_NULL) String jti) {
    }
}
