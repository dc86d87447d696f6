package dev.crossbar.server;

import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.testing.CrossbarCluster;
import dev.crossbar.server.testing.JdkClient;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster view ({@code /ws?scope=cluster}) over a real three-server NATS cluster and three
 * in-process relays, started once for the class: exact counts merged from every node, client rows of
 * one topic on request, and a stopped node shown missing, then back.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClusterStatsIT {

    private static final Duration INTERVAL = Duration.ofMillis(500);
    private static final Duration CLUSTER_TIMEOUT = Duration.ofMillis(300);
    /** Generous: many intervals, so a slow machine passes and a hang still fails in seconds. */
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    static Path dir;
    static CrossbarCluster cluster;

    @BeforeAll
    static void start() {
        cluster = CrossbarCluster.start(dir, (i, b) -> b.statsInterval(INTERVAL).statsClusterTimeout(CLUSTER_TIMEOUT));
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static URI clusterSocket(int node) {
        return URI.create("ws://127.0.0.1:" + cluster.node(node).port() + "/ws?scope=cluster");
    }

    private static JsonNode topic(JsonNode view, String name) {
        for (JsonNode t : view.path("topics")) {
            if (t.path("topic").asText().equals(name)) {
                return t;
            }
        }
        return null;
    }

    private static JsonNode nodeRow(JsonNode topic, String node) {
        for (JsonNode n : topic.path("nodes")) {
            if (n.path("node").asText().equals(node)) {
                return n;
            }
        }
        throw new AssertionError("no row for " + node + " in " + topic);
    }

    private static Map<String, String> states(JsonNode view) {
        Map<String, String> out = new HashMap<>();
        for (JsonNode n : view.path("nodes")) {
            out.put(n.path("node").asText(), n.path("state").asText());
        }
        return out;
    }

    private static boolean allUp(JsonNode view) {
        Map<String, String> s = states(view);
        return s.size() == CrossbarCluster.NODES && s.values().stream().allMatch("up"::equals);
    }

    @Test
    void everyNodeShowsExactCountsMergedFromAllNodes() throws Exception {
        List<JdkClient> clients = new ArrayList<>();
        try {
            clients.add(JdkClient.connectAs(cluster.ws(0, "/in/cam"), "LabCam/2.1 (Linux; rev 7)"));
            for (int k = 0; k < 2; k++) {
                clients.add(JdkClient.connectAs(cluster.ws(0, "/out/cam"), "viewer-a/" + k));
            }
            for (int k = 0; k < 3; k++) {
                clients.add(JdkClient.connectAs(cluster.ws(1, "/out/cam"), "viewer-b/" + k));
            }
            for (int k = 0; k < 2; k++) {
                clients.add(JdkClient.connectAs(cluster.ws(2, "/lab/room"), "member-c/" + k));
            }
            for (int reader = 0; reader < CrossbarCluster.NODES; reader++) {
                try (JdkClient stats = JdkClient.connect(clusterSocket(reader))) {
                    JsonNode view = nextWhere(stats, WAIT, v -> allUp(v) && v.path("totals").path("connections").asInt() == 8);
                    assertEquals("cluster", view.path("scope").asText());
                    assertEquals(CrossbarCluster.name(reader), view.path("node").asText());
                    assertEquals(2, view.path("totals").path("topics").asInt(), view.toString());
                    JsonNode cam = topic(view, "/out/cam");
                    assertEquals(1, cam.path("members").path("publisher").asInt(), cam.toString());
                    assertEquals(5, cam.path("members").path("subscriber").asInt(), cam.toString());
                    assertEquals(2, cam.path("nodes").size(), "a row per node that has the topic: " + cam);
                    assertEquals(1, nodeRow(cam, "node-a").path("members").path("publisher").asInt());
                    assertEquals(2, nodeRow(cam, "node-a").path("members").path("subscriber").asInt());
                    assertEquals(3, nodeRow(cam, "node-b").path("members").path("subscriber").asInt());
                    JsonNode room = topic(view, "/lab/room");
                    assertEquals(2, room.path("members").path("member").asInt(), room.toString());
                    assertEquals(1, room.path("nodes").size());
                    assertEquals(2, nodeRow(room, "node-c").path("members").path("member").asInt());
                    assertTrue(view.path("clients").isMissingNode(), "no client rows in the summary");

                    // One topic's rows on request, from every node that has it, each naming its node.
                    stats.sendText("{\"topic\":\"/out/cam\",\"schema\":\"1:n\"}");
                    JsonNode rows = nextWhere(stats, WAIT, m -> "clients".equals(m.path("type").asText()));
                    assertEquals("/out/cam", rows.path("topic").asText());
                    assertEquals(0, rows.path("missing").size(), rows.toString());
                    Map<String, Integer> perNode = new HashMap<>();
                    for (JsonNode c : rows.path("clients")) {
                        perNode.merge(c.path("node").asText(), 1, Integer::sum);
                        // Privacy by default holds across nodes too.
                        assertEquals("127.0.0.0/24", c.path("remoteAddr").asText(), c.toString());
                        assertTrue(c.path("userAgent").asText().matches("LabCam|viewer-[ab]"), c.toString());
                    }
                    assertEquals(Map.of("node-a", 3, "node-b", 3), perNode, rows.toString());
                    assertEquals("truncated", rows.path("clientDetails").asText());
                }
            }
        } finally {
            clients.forEach(JdkClient::close);
        }
    }

    @Test
    void aStoppedNodeIsShownMissingAndComesBack() throws Exception {
        try (JdkClient stats = JdkClient.connect(clusterSocket(0))) {
            nextWhere(stats, WAIT, ClusterStatsIT::allUp);
            Instant stopping = Instant.now();
            cluster.stop(2);
            Instant stopped = Instant.now();
            try {
                JsonNode view = nextWhere(stats, WAIT, v -> "missing".equals(states(v).get("node-c")));
                System.out.printf("cluster view: node-c shown missing %d ms after it stopped (interval %d ms, timeout %d ms)%n",
                        Duration.between(stopped, Instant.now()).toMillis(), INTERVAL.toMillis(), CLUSTER_TIMEOUT.toMillis());
                JsonNode c = null;
                for (JsonNode n : view.path("nodes")) {
                    if (n.path("node").asText().equals("node-c")) {
                        c = n;
                    }
                }
                // Missing since it last answered: not after it was stopped, and within a few intervals before.
                Instant since = Instant.parse(c.path("since").asText());
                assertTrue(!since.isAfter(stopped) && since.isAfter(stopping.minus(INTERVAL.multipliedBy(4))),
                        "since " + since + ", stopping " + stopping + ", stopped " + stopped);
                assertEquals("up", states(view).get("node-b"), "the others stay up: " + view);
                assertEquals(3, view.path("nodes").size(), "a missing node is listed, not left out: " + view);
            } finally {
                cluster.restart(2);
            }
            Instant restarted = Instant.now();
            nextWhere(stats, WAIT, ClusterStatsIT::allUp);
            System.out.printf("cluster view: node-c back %d ms after it restarted%n",
                    Duration.between(restarted, Instant.now()).toMillis());
        }
    }

    @Test
    void localScopeStaysThisNodesOwnAndSaysItIsClustered() throws Exception {
        try (JdkClient local = JdkClient.connect(URI.create("ws://127.0.0.1:" + cluster.node(1).port() + "/ws"))) {
            JsonNode s = nextWhere(local, WAIT, v -> true);
            assertTrue(s.path("scope").isMissingNode(), s.toString());
            assertEquals("node-b", s.path("node").asText());
            assertTrue(s.path("clustered").asBoolean(), s.toString());
        }
    }
}
