package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How each scenario lays out its streams and topics, and when its senders start. */
class PlanTest {

    private static final URI LOCAL = URI.create("ws://127.0.0.1:8080");

    private static Plan plan(LoadConfig.Builder b) {
        return Plan.of(b.build(), "t-1-ab");
    }

    /** Connections the plan opens, counted from its groups: what validation bounds beforehand. */
    private static long connections(Plan p) {
        long n = 0;
        for (Group g : p.groups()) {
            n += g.part().manyToMany() ? g.receiverCount() : g.receiverCount() + g.stalledCount() + 1;
        }
        return n;
    }

    @Test
    void singleTopicScenariosKeepTheirPaths() {
        Plan fanout = plan(LoadConfig.builder(Scenario.FANOUT, LOCAL).count(7));
        assertEquals(1, fanout.groups().size());
        Group g = fanout.groups().get(0);
        assertEquals("/in/t-1-ab", g.publishPath());
        assertEquals("/out/t-1-ab", g.receivePath());
        assertEquals(7, g.receiverCount());
        assertFalse(fanout.spreadPhases(), "senders start at once, as they always have");

        Group mesh = plan(LoadConfig.builder(Scenario.MESH, LOCAL).count(5)).groups().get(0);
        assertEquals("/t-1-ab", mesh.publishPath());
        assertEquals(5, mesh.sendersHeard());
        assertEquals(1, plan(LoadConfig.builder(Scenario.SLOW, LOCAL)).groups().get(0).stalledCount());
    }

    @Test
    void streamsAreManyCamerasEachWithItsViewers() {
        LoadConfig c = LoadConfig.builder(Scenario.STREAMS, LOCAL).groups(30).count(3).build();
        Plan p = Plan.of(c, "t-1-ab");
        assertEquals(1, p.parts().size());
        assertEquals(30, p.groups().size());
        Set<String> paths = new HashSet<>();
        for (Group g : p.groups()) {
            assertTrue(g.publishPath().startsWith("/in/cam/t-1-ab/"), g.publishPath());
            assertEquals(g.publishPath().replace("/in/", "/out/"), g.receivePath());
            assertEquals(3, g.receiverCount());
            assertEquals(1, g.sendersHeard());
            paths.add(g.publishPath());
        }
        assertEquals(30, paths.size(), "one stream each");
        assertEquals(Plan.connections(Scenario.STREAMS, 30, 3, 0, 0), connections(p));
    }

    @Test
    void topicsAreManySmallNToNTopics() {
        LoadConfig c = LoadConfig.builder(Scenario.TOPICS, LOCAL).groups(40).count(3).build();
        Plan p = Plan.of(c, "t-1-ab");
        assertEquals(40, p.groups().size());
        for (Group g : p.groups()) {
            assertTrue(g.part().manyToMany());
            assertTrue(g.publishPath().startsWith("/data/t-1-ab/"), g.publishPath());
            assertEquals(3, g.sendersHeard(), "each client hears the others of its topic");
        }
        assertEquals(Plan.connections(Scenario.TOPICS, 40, 3, 0, 0), connections(p));
    }

    @Test
    void mixedHasVideoDataAndAFileTransferAndOneStalledReader() {
        LoadConfig c = LoadConfig.builder(Scenario.MIXED, LOCAL).build();
        Plan p = Plan.of(c, "t-1-ab");
        assertEquals(List.of(Plan.VIDEO, Plan.DATA, Plan.FILE), p.parts().stream().map(Part::name).toList());
        Part video = p.parts().get(0);
        Part data = p.parts().get(1);
        Part file = p.parts().get(2);
        assertEquals(Scenario.MIXED.groups, video.groups().size());
        assertEquals(1, video.groups().get(0).stalledCount(), "the stalled reader watches the first camera");
        assertEquals(0, video.groups().get(1).stalledCount());
        assertEquals(LoadConfig.DEFAULT_DATA_TOPICS, data.groups().size());
        assertEquals(Plan.DATA_SIZE, data.format().size());
        assertEquals(1, file.groups().size());
        assertEquals(Plan.FILE_SIZE, file.format().size());
        assertEquals(Plan.FILE_WINDOW, file.window(), "lossless and bounded: a window of messages in flight");
        assertEquals("/in/files/t-1-ab", file.groups().get(0).publishPath());
        assertEquals(Plan.connections(Scenario.MIXED, c.groups(), c.count(), c.dataTopics(), c.stalled()), connections(p));

        Plan without = plan(LoadConfig.builder(Scenario.MIXED, LOCAL).dataTopics(0).stalled(0));
        assertEquals(List.of(Plan.VIDEO, Plan.FILE), without.parts().stream().map(Part::name).toList());
        assertEquals(0, without.groups().get(0).stalledCount());
    }

    @Test
    void aCampusSendersStartSpreadOverTheirPeriod() {
        Plan p = plan(LoadConfig.builder(Scenario.STREAMS, LOCAL).rate(10.0));
        assertTrue(p.spreadPhases());
        Part part = p.parts().get(0);
        Set<Long> delays = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            long d = p.startDelayNanos(part, i, 200);
            assertTrue(d >= 0 && d < 100_000_000L, "within one period of 100 ms: " + d);
            delays.add(d);
        }
        assertEquals(200, delays.size(), "no two in phase");
        Plan fanout = plan(LoadConfig.builder(Scenario.FANOUT, LOCAL));
        assertEquals(0, fanout.startDelayNanos(fanout.parts().get(0), 0, 1));
    }
}
