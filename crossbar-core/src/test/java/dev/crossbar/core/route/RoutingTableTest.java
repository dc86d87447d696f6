package dev.crossbar.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The routing table: globs, first match wins, 1:N stream names, and bad rules named by where they are. */
class RoutingTableTest {

    private final RouteParser routes = new RouteParser();

    @TempDir
    Path dir;

    private static StreamPattern glob(String p) {
        return StreamPattern.parse(p);
    }

    @Test
    void oneStarIsOneSegmentAndTwoStarsAnyNumber() {
        assertTrue(glob("/cam/*").matches("/cam/1"));
        assertFalse(glob("/cam/*").matches("/cam/1/hd"));
        assertFalse(glob("/cam/*").matches("/cam"));
        assertTrue(glob("/cam/**").matches("/cam/1/hd"));
        assertTrue(glob("/cam/**").matches("/cam/1"));
        assertTrue(glob("/cam/**").matches("/cam"));
        assertTrue(glob("/**").matches("/anything/at/all"));
        assertTrue(glob("/*/data").matches("/pendulum/data"));
        assertFalse(glob("/*/data").matches("/pendulum/video"));
        assertTrue(glob("/lab/**/video").matches("/lab/a/b/video"));
        assertTrue(glob("/lab/**/video").matches("/lab/video"));
        assertFalse(glob("/lab/**/video").matches("/lab/a/b/data"));
        assertTrue(glob("/exact").matches("/exact"));
        assertFalse(glob("/exact").matches("/exactly"));
    }

    @Test
    void oneToManyStreamsAreMatchedWithoutTheirPrefixAndManyToManyByPath() {
        RoutingTable table = new RoutingTable(RoutingTable.parseAll(List.of("/cam/*:start=keyframe")));
        assertEquals(StreamOptions.Start.KEYFRAME, table.resolve(routes.parse("/in/cam/1").topic()).start());
        assertEquals(StreamOptions.Start.KEYFRAME, table.resolve(routes.parse("/out/cam/1").topic()).start());
        assertEquals(StreamOptions.Start.KEYFRAME, table.resolve(routes.parse("/cam/1").topic()).start());
        // The prefix itself is not part of the stream's name.
        assertEquals(StreamOptions.DEFAULT, table.resolve(routes.parse("/in/other/1").topic()));
        assertNull(table.ruleFor(routes.parse("/out/cam/1/hd").topic()));
    }

    @Test
    void theFirstMatchingRuleWins() {
        RoutingTable table = new RoutingTable(RoutingTable.parseAll(List.of(
                "/cam/slow:start=keyframe,max-latency=2s",
                "/cam/*:start=keyframe,max-latency=500ms",
                "/**:start=last")));
        StreamRule slow = table.ruleFor(routes.parse("/out/cam/slow").topic());
        assertEquals(Duration.ofSeconds(2), slow.options().maxLatency());
        assertEquals("--route #1", slow.source());
        assertEquals(Duration.ofMillis(500), table.resolve(routes.parse("/out/cam/2").topic()).maxLatency());
        assertEquals(StreamOptions.Start.LAST, table.resolve(routes.parse("/sensor/t").topic()).start());
        assertEquals("/cam/*:start=keyframe,max-latency=500ms",
                table.ruleFor(routes.parse("/in/cam/2").topic()).describe());
    }

    @Test
    void schemaSessionMakesAStreamASessionStreamAndTakesNoOtherKey() {
        RoutingTable table = new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session")));
        assertTrue(table.hasSessions());
        assertTrue(table.resolve(routes.parse("/in/shell/exp1").topic()).session());
        assertTrue(table.resolve(routes.parse("/out/shell/exp1").topic()).session());
        assertFalse(table.resolve(routes.parse("/out/cam").topic()).session());
        assertEquals("/shell/*:schema=session", table.ruleFor(routes.parse("/in/shell/a").topic()).describe());
        assertFalse(RoutingTable.EMPTY.hasSessions());
        assertFalse(new RoutingTable(RoutingTable.parseAll(List.of("/cam/*:start=last"))).hasSessions());
        InvalidRuleException other = assertThrows(InvalidRuleException.class,
                () -> StreamRule.parse("/shell/*:schema=1:n", "--route #1"));
        assertEquals("--route #1: schema=1:n (expected: session)", other.getMessage());
        InvalidRuleException mixed = assertThrows(InvalidRuleException.class,
                () -> StreamRule.parse("/shell/*:schema=session,start=last", "--route #2"));
        assertTrue(mixed.getMessage().startsWith("--route #2: schema=session takes no start, max-latency or slow"),
                mixed.getMessage());
    }

    @Test
    void noRulesMeansTodaysBehaviour() {
        assertEquals(StreamOptions.DEFAULT, RoutingTable.EMPTY.resolve(routes.parse("/in/cam").topic()));
        assertFalse(StreamOptions.DEFAULT.remembers());
        assertFalse(StreamOptions.DEFAULT.boundsLatency());
    }

    @Test
    void aFileHasOneRulePerLineWithComments() throws Exception {
        Path file = dir.resolve("routes.conf");
        Files.writeString(file, "# cameras\n/cam/*:start=keyframe   # live video\n\n/sensor/**:start=last\n");
        List<StreamRule> rules = RoutingTable.readFile(file);
        assertEquals(2, rules.size());
        assertEquals(file + ":2", rules.get(0).source());
        assertEquals(file + ":4", rules.get(1).source());
    }

    @Test
    void aBadRuleIsRefusedWithWhereItIsAndWhatIsWrong() throws Exception {
        Path file = dir.resolve("routes.conf");
        Files.writeString(file, "/cam/*:start=keyframe\n# fine so far\n/sensor/*:start=sometimes\n");
        InvalidRuleException e = assertThrows(InvalidRuleException.class, () -> RoutingTable.readFile(file));
        assertEquals(file + ":3: start=sometimes (expected: live, keyframe or last)", e.getMessage());

        assertMessage("--route #1: 'cam' is not PATTERN:KEY=VALUE[,KEY=VALUE...] (e.g. /cam/*:start=keyframe)", "cam");
        assertMessage("--route #1: pattern 'cam/*' must start with / (e.g. /cam/*)", "cam/*:start=last");
        assertMessage("--route #1: pattern '/cam/x*' : '*' and '**' must be whole segments, not part of 'x*'"
                .replace("' :", "':"), "/cam/x*:start=last");
        assertMessage("--route #1: unknown option 'rate' (keys: start, max-latency, slow, schema)", "/cam/*:rate=5");
        assertMessage("--route #1: 'start' given twice", "/cam/*:start=last,start=keyframe");
        assertMessage("--route #1: 'soon' (expected: a duration such as 500ms, 30s, 1.5s or 5m)", "/cam/*:max-latency=soon");
        assertMessage("--route #1: max-latency=0ms (expected: > 0, e.g. 500ms)", "/cam/*:max-latency=0ms");
        assertMessage("--route #1: pattern '/cam//x' has an empty segment", "/cam//x:start=last");
    }

    private static void assertMessage(String expected, String rule) {
        InvalidRuleException e = assertThrows(InvalidRuleException.class, () -> RoutingTable.parseAll(List.of(rule)));
        assertEquals(expected, e.getMessage());
    }
}
