package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.StreamRule;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule the tool gives Crossbar is one Crossbar's own parser reads as lossless for every stream. */
class SlowPolicyTest {

    @Test
    void dropLeavesTheCommandAsGiven() {
        assertNull(SlowPolicy.DROP.rule(SlowPolicy.ALL_STREAMS));
        assertEquals("relay --listen 127.0.0.1:{port}",
                SlowPolicy.DROP.apply("relay --listen 127.0.0.1:{port}", SlowPolicy.ALL_STREAMS));
    }

    @Test
    void backpressureAppendsARuleCrossbarParsesAsBackpressure() {
        String command = SlowPolicy.BACKPRESSURE.apply("exec relay --listen 127.0.0.1:{port}", SlowPolicy.ALL_STREAMS);
        assertEquals("exec relay --listen 127.0.0.1:{port} --route '/**:slow=backpressure'", command);
        List<StreamRule> rules = RoutingTable.parseAll(List.of(SlowPolicy.BACKPRESSURE.rule(SlowPolicy.ALL_STREAMS)));
        assertEquals(1, rules.size());
        assertTrue(rules.get(0).options().lossless(), "lossless: " + rules.get(0));
        assertFalse(rules.get(0).options().session());
        // Every stream the generator makes: its topics are one segment, e.g. /in/file-75MB-1-ab -> /file-75MB-1-ab.
        assertTrue(rules.get(0).pattern().matches("/file-75MB-1-ab"));
    }

    /** In mixed, only the file transfer is lossless: its video (with a stalled reader) and data keep the default. */
    @Test
    void mixedPutsOnlyItsFileTransferUnderBackpressure() {
        String pattern = Scenario.MIXED.backpressurePattern();
        List<StreamRule> rules = RoutingTable.parseAll(List.of(SlowPolicy.BACKPRESSURE.rule(pattern)));
        assertTrue(rules.get(0).options().lossless(), "lossless: " + rules.get(0));
        Plan plan = Plan.of(LoadConfig.builder(Scenario.MIXED, java.net.URI.create("ws://127.0.0.1:9")).build(), "bench-1-ab");
        for (Part part : plan.parts()) {
            for (Group g : part.groups()) {
                String stream = g.publishPath().replaceFirst("^/in/", "/");
                assertEquals(part.name().equals(Plan.FILE), rules.get(0).pattern().matches(stream), part.name() + " " + stream);
            }
        }
        assertEquals(SlowPolicy.ALL_STREAMS, Scenario.STREAMS.backpressurePattern());
    }
}
