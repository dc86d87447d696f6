package dev.crossbar.core.route;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of route parsing (Jazzer). In a normal build it replays its seeds;
 * {@code .ci/run} also fuzzes it for a bounded time (JAZZER_FUZZ=1, see the crossbar-core pom).
 */
class RouteParserFuzzTest {

    private static final RouteParser PARSER = new RouteParser(64);

    @FuzzTest(maxDuration = "20s")
    void parsesOrRefusesWithAReason(String path) {
        if (path == null) {
            return; // parse() requires a path, as a decoded URL always has one
        }
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
        // Normalising is idempotent: a parsed path parses to itself.
        assertTrue(PARSER.parse(p).equals(route), p);
    }
}
