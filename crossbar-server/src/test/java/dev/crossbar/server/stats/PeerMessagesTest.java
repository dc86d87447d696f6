package dev.crossbar.server.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.stats.Snapshot.Flow;
import dev.crossbar.server.stats.Snapshot.Members;
import dev.crossbar.server.stats.Snapshot.TopicView;
import dev.crossbar.server.stats.Snapshot.Totals;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A node's statistics reply stays within its bound, says what it left out, and reads back whole. */
class PeerMessagesTest {

    private static Snapshot snapshot(int topics) {
        List<TopicView> list = new ArrayList<>();
        Flow f = new Flow(10, 1000, 1.5, 150, 100, 0.2);
        for (int i = 0; i < topics; i++) {
            list.add(new TopicView("/out/camera-" + i, "camera-" + i, "1:n", "2026-01-01T00:00:00Z", new Members(1, 20, 0),
                    f, f, 0, 0, null));
        }
        return new Snapshot("node-x", "2026-01-01T00:00:01Z", "2026-01-01T00:00:00Z", 1, 5, "truncated", true,
                new Totals(21 * topics, topics, 0, 0, 0, 0, 0, 0, 0), list, List.of(), null, null);
    }

    @Test
    void aLargeSummaryIsCutToTheBoundAndCountsWhatItLeftOut() {
        int max = 64 * 1024;
        byte[] out = PeerMessages.bounded(new PeerMessages.Reply("node-x", snapshot(5000), 0, 0), max);
        assertNotNull(out);
        assertTrue(out.length <= max, out.length + " bytes");
        PeerMessages.Reply r = PeerMessages.reply(out);
        assertNotNull(r);
        int kept = r.snapshot().topics().size();
        assertTrue(kept > 100, "kept " + kept + ": the bound is used, not wasted");
        assertEquals(5000, kept + r.omittedTopics());
        assertEquals(5000 * 21, r.snapshot().totals().connections(), "totals stay whole");
    }

    @Test
    void aSmallSummaryIsSentWhole() {
        byte[] out = PeerMessages.bounded(new PeerMessages.Reply("node-x", snapshot(3), 0, 0), 64 * 1024);
        PeerMessages.Reply r = PeerMessages.reply(out);
        assertEquals(3, r.snapshot().topics().size());
        assertEquals(0, r.omittedTopics());
        assertEquals(0.2, r.snapshot().topics().get(0).in().lastSeconds());
    }

    @Test
    void garbageIsNotAReplyNorARequest() {
        assertEquals(null, PeerMessages.reply("{\"x\":1".getBytes()));
        assertEquals(null, PeerMessages.reply("{}".getBytes()));
        assertEquals(null, PeerMessages.request("[1,2]".getBytes()));
    }
}
