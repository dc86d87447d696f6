package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.ServerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The sample configuration that docs/ops installs (docs/ops/crossbar.yaml) is one the relay accepts,
 * and the systemd unit's start check asks the admin address it sets.
 */
class OpsConfigTest {

    private static final Path OPS = Path.of("..", "docs", "ops");

    @Test
    void theSampleConfigurationIsValidAndTheUnitChecksItsAdminAddress() throws Exception {
        Path file = OPS.resolve("crossbar.yaml");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(Map.of(), new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true),
                "--config", file.toString(), "--print-config");
        assertEquals(0, code, err.toString());
        ServerConfig config = Main.load(new String[] {"--config", file.toString()}, Map.of());
        String unit = Files.readString(OPS.resolve("crossbar.service"));
        assertTrue(unit.contains("--config /etc/crossbar/crossbar.yaml"), "the unit reads the installed file");
        assertTrue(unit.contains("docs/ops/crossbar.yaml /etc/crossbar/crossbar.yaml"), "its header installs it");
        Matcher check = Pattern.compile("healthcheck\\.sh --ready-within \\d+ (\\S+)").matcher(unit);
        assertTrue(check.find(), "the unit's start check");
        assertEquals(config.adminListen().getHostString() + ":" + config.adminListen().getPort(), check.group(1));
        assertTrue(config.drainTimeout().getSeconds() + 5 <= stopTimeoutSeconds(unit),
                "TimeoutStopSec leaves the drain its time");
    }

    private static long stopTimeoutSeconds(String unit) {
        Matcher m = Pattern.compile("TimeoutStopSec=(\\d+)s").matcher(unit);
        assertTrue(m.find());
        return Long.parseLong(m.group(1));
    }
}
