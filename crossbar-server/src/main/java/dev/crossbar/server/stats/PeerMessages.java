package dev.crossbar.server.stats;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.List;

/**
 * What nodes say to each other about statistics, as JSON (documented in {@code docs/protocol.md},
 * "Cluster statistics"). Unknown fields are ignored, so nodes of different versions still read each
 * other's summaries.
 */
final class PeerMessages {

    /** A request: a node's topic {@code summary}, or the {@code clients} of one topic. */
    static final String SUMMARY = "summary";
    static final String CLIENTS = "clients";

    /**
     * @param kind {@link #SUMMARY} or {@link #CLIENTS}
     * @param from the asking node's name, for the answerer's logs
     * @param topic for {@code clients}: the topic's display name ({@code /out/cam}, {@code /lab/chat})
     * @param schema for {@code clients}: {@code 1:n} or {@code n:n}
     * @param clientDetails how the asker's reader may see client rows: {@code truncated} or {@code full}
     */
    record Request(String kind, String from, String topic, String schema, String clientDetails) {
    }

    /**
     * A node's answer: its snapshot (topics always; clients only of the topic asked for) and what
     * did not fit in the reply bound.
     */
    record Reply(String node, Snapshot snapshot, int omittedTopics, int omittedClients) {
    }

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private PeerMessages() {
    }

    static byte[] write(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    /** The request, or null if these bytes are not one. */
    static Request request(byte[] data) {
        try {
            Request r = MAPPER.readValue(data, Request.class);
            return r == null || r.kind() == null ? null : r;
        } catch (IOException e) {
            return null;
        }
    }

    /** The reply, or null if these bytes are not one (a node of another version, or garbage). */
    static Reply reply(byte[] data) {
        try {
            Reply r = MAPPER.readValue(data, Reply.class);
            return r == null || r.node() == null || r.snapshot() == null ? null : r;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * {@code reply} serialised within {@code maxBytes}: topics (for a summary) or client rows (for
     * clients) past what fits are left out and counted. Null if even an empty reply does not fit.
     */
    static byte[] bounded(Reply reply, int maxBytes) {
        Snapshot s = reply.snapshot().withoutSessions();
        reply = new Reply(reply.node(), s, reply.omittedTopics(), reply.omittedClients());
        byte[] out = write(reply);
        int topics = s.topics().size();
        int clients = s.clients().size();
        while (out.length > maxBytes) {
            if (clients > 0) {
                // Shrink by the measured overshoot, with a margin: two or three passes at most.
                clients = Math.min(clients - 1, (int) (clients * (maxBytes * 0.9 / out.length)));
            } else if (topics > 0) {
                topics = Math.min(topics - 1, (int) (topics * (maxBytes * 0.9 / out.length)));
            } else {
                return null;
            }
            Snapshot trimmed = new Snapshot(s.node(), s.time(), s.startedAt(), s.uptimeSeconds(), s.intervalSeconds(),
                    s.clientDetails(), s.clustered(), s.totals(), List.copyOf(s.topics().subList(0, topics)),
                    List.copyOf(s.clients().subList(0, clients)), null, null);
            out = write(new Reply(reply.node(), trimmed, reply.omittedTopics() + s.topics().size() - topics,
                    reply.omittedClients() + s.clients().size() - clients));
        }
        return out;
    }
}
