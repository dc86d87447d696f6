package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --log-format json}: every line the relay writes is one JSON object with the fields a collector reads. */
class LogFormatIT {

    @TempDir
    Path dir;

    @Test
    void everyLineIsOneJsonObject() throws Exception {
        Path log = dir.resolve("relay.log");
        Process relay = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "--listen", "127.0.0.1:0", "--event-loops", "1", "--log-format", "json", "--log-level", "debug")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.readString(log).contains("Crossbar listening")) {
                assertTrue(relay.isAlive(), "the relay exited:\n" + Files.readString(log));
                assertTrue(System.nanoTime() < deadline, "no listening line:\n" + Files.readString(log));
                Thread.sleep(50);
            }
        } finally {
            relay.destroy();
            assertTrue(relay.waitFor(15, TimeUnit.SECONDS));
        }
        List<String> lines = Files.readAllLines(log).stream().filter(l -> !l.isBlank()).toList();
        ObjectMapper json = new ObjectMapper();
        boolean listening = false;
        for (String line : lines) {
            JsonNode e = json.readTree(line);
            assertTrue(e.isObject(), line);
            for (String field : List.of("time", "level", "logger", "message")) {
                assertTrue(e.hasNonNull(field), field + " missing: " + line);
            }
            listening |= e.get("message").asText().startsWith("Crossbar listening on 127.0.0.1:");
        }
        assertTrue(listening, String.join("\n", lines));
        assertEquals("CrossbarServer", lines.stream().map(l -> {
            try {
                return json.readTree(l);
            } catch (Exception ex) {
                throw new AssertionError(ex);
            }
        }).filter(e -> e.get("message").asText().startsWith("Crossbar listening")).findFirst().orElseThrow()
                .get("logger").asText());
    }
}
