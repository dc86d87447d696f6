package dev.crossbar.core.route;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.crossbar.core.schema.Role;
import java.nio.charset.StandardCharsets;

/**
 * Coverage-guided fuzzing of route parsing (Jazzer). In a normal build it replays its seeds;
 * {@code .ci/run} also fuzzes it for a bounded time (JAZZER_FUZZ=1, see the crossbar-core pom).
 */
class RouteParserFuzzTest {

    private static final RouteParser PARSER = new RouteParser(64);

    /**
     * Takes bytes, one character each (ISO-8859-1), as a request line carries them: seeds are plain
     * files of paths in {@code RouteParserFuzzTestInputs/}, and every byte value is reachable.
     */
    @FuzzTest(maxDuration = "20s")
    void parsesOrRefusesWithAReason(byte[] bytes) {
        String path = new String(bytes, StandardCharsets.ISO_8859_1);
        Route route;
        try {
            route = PARSER.parse(path);
        } catch (InvalidRouteException e) {
            assertFalse(e.getMessage().isBlank());
            return;
        }
        String p = route.path();
        assertTrue(p.startsWith("/") && p.length() > 1 && p.length() <= 64, p);
        assertFalse(p.endsWith("/") || p.contains("//"), p);
        assertFalse(p.contains("/../") || p.endsWith("/..") || p.contains("/./") || p.endsWith("/."), p);
        for (int i = 0; i < p.length(); i++) {
            assertFalse(Character.isISOControl(p.charAt(i)), p);
        }
        assertFalse(route.topic().name().isEmpty(), p);
        // The prefix decides the schema and role, and the rest is the stream (docs/protocol.md, Routes).
        if (p.startsWith("/in/")) {
            assertTrue(route.role() == Role.PUBLISHER && route.topic().name().equals(p.substring(4)), route::toString);
        } else if (p.startsWith("/out/")) {
            assertTrue(route.role() == Role.SUBSCRIBER && route.topic().name().equals(p.substring(5)), route::toString);
        } else {
            assertTrue(route.role() == Role.MEMBER && route.topic().name().equals(p), route::toString);
        }
        assertTrue(route.schema() == route.topic().schema(), route::toString);
        // Normalising is idempotent: a parsed path parses to itself.
        assertTrue(PARSER.parse(p).equals(route), p);
    }
}
