package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.crossbar.core.replay.ReplayLimits;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.config.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --route}, {@code --routes} and the replay bounds: order, defaults and one-line refusals. */
class RoutingFlagsTest {

    @TempDir
    Path dir;

    private static ServerConfig config(String... args) {
        CrossbarCommand cmd = ConfigSources.resolve(args, Map.of()).command();
        return cmd.toConfig();
    }

    @Test
    void noRulesAndDefaultBounds() {
        ServerConfig c = config();
        assertEquals(0, c.routing().rules().size());
        assertEquals(ReplayLimits.DEFAULT, c.replayLimits());
    }

    @Test
    void commandLineRulesComeBeforeTheFilesInTheirOrder() throws Exception {
        Path file = dir.resolve("routes.conf");
        Files.writeString(file, "# lab streams\n/cam/*:start=keyframe\n/sensor/**:start=last\n");
        RoutingTable t = config("--route", "/cam/slow:start=keyframe,max-latency=2s", "--routes", file.toString(),
                "--route", "/ctl/*:start=live", "--keyframe-buffer", "2MiB", "--last-values", "8",
                "--last-values-size", "64KiB").routing();
        assertEquals("--route #1", t.rules().get(0).source());
        assertEquals("/ctl/*:start=live", t.rules().get(1).describe());
        assertEquals(file + ":2", t.rules().get(2).source());
        assertEquals(file + ":3", t.rules().get(3).source());
        assertEquals(new ReplayLimits(8, 64 * 1024, 2 * 1024 * 1024),
                config("--keyframe-buffer", "2MiB", "--last-values", "8", "--last-values-size", "64KiB").replayLimits());
    }

    @Test
    void aBadRuleIsOneLineNamingWhere() throws Exception {
        Path file = dir.resolve("routes.conf");
        Files.writeString(file, "/cam/*:start=keyframe\n\n/x/*:start=keyframes\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> config("--routes", file.toString()));
        assertEquals(file + ":3: start=keyframes (expected: live, keyframe or last)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> config("--route", "/cam/*:start=last", "--route", "/x"));
        assertEquals("--route #2: '/x' is not PATTERN:KEY=VALUE[,KEY=VALUE...] (e.g. /cam/*:start=keyframe)",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> config("--routes", dir.resolve("missing").toString()));
        assertEquals(true, e.getMessage().startsWith("--routes " + dir.resolve("missing") + ": cannot read"));
        e = assertThrows(IllegalArgumentException.class, () -> config("--last-values", "0"));
        assertEquals("--last-values, --last-values-size and --keyframe-buffer must be > 0", e.getMessage());
    }
}
