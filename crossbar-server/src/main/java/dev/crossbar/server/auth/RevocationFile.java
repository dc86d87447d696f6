package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.config.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --auth-revocation-file}: revocations of a node on its own, kept across restarts. One JSON
 * object per line ({@code {"jti":...,"sid":...,"until":millis}}), appended as they come (with a
 * flush to the disk before the admin is answered); at start the file is read, what has expired is
 * dropped and the rest written back whole (a temporary file renamed over it), so it never grows
 * beyond the revocations still in force plus those of one run. A line that cannot be read is
 * skipped with a warning, never fatal: a torn last line after a crash loses one revocation at most.
 */
public final class RevocationFile implements RevocationStore {

    private static final Logger log = LoggerFactory.getLogger(RevocationFile.class);

    private final Path file;
    private final LongSupplier clock;

    public RevocationFile(Path file) {
        this(file, System::currentTimeMillis);
    }

    RevocationFile(Path file, LongSupplier clock) {
        this.file = requireNonNull(file, "file");
        this.clock = requireNonNull(clock, "clock");
    }

    @Override
    public synchronized void start(Consumer<Revocation> sink) {
        List<Revocation> live = new ArrayList<>();
        try {
            if (Files.exists(file)) {
                long now = clock.getAsLong();
                int n = 0;
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    n++;
                    if (line.isBlank()) {
                        continue;
                    }
                    Revocation r = parse(line);
                    if (r == null) {
                        log.warn("Revocation file {} line {} skipped: not a revocation", file, n);
                    } else if (r.untilMillis() > now) {
                        live.add(r);
                    }
                }
            }
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            StringBuilder b = new StringBuilder();
            for (Revocation r : live) {
                b.append(line(r)).append('\n');
            }
            Files.writeString(tmp, b, StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("auth revocation file: cannot read or write " + file + ": " + e.getMessage(), e);
        }
        live.forEach(sink);
        log.info("Revocations kept in {}: {} in force", file, live.size());
    }

    @Override
    public synchronized void save(Revocation r) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            ch.write(java.nio.ByteBuffer.wrap((line(r) + "\n").getBytes(StandardCharsets.UTF_8)));
            ch.force(false);
        }
    }

    static String line(Revocation r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jti", r.jti());
        m.put("sid", r.sid());
        m.put("until", r.untilMillis());
        try {
            return Json.MAPPER.writeValueAsString(m);
        } catch (IOException e) {
            throw new IllegalStateException("strings and a number are JSON", e);
        }
    }

    /** A stored line as a revocation, or null if it is not one. */
    static Revocation parse(String line) {
        try {
            JsonNode n = Json.MAPPER.readTree(line);
            String jti = n.path("jti").isTextual() ? n.get("jti").asText() : null;
            String sid = n.path("sid").isTextual() ? n.get("sid").asText() : null;
            if ((jti == null && sid == null) || !n.path("until").canConvertToLong()) {
                return null;
            }
            return new Revocation(jti, sid, n.get("until").asLong());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public String describe() {
        return "file " + file;
    }

    @Override
    public void close() {
    }
}
