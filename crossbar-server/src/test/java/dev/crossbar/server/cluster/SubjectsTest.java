package dev.crossbar.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.route.TopicKey;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Topic to subject: injective, free of NATS's special characters, hashed (and flagged) when long. */
class SubjectsTest {

    private final RouteParser parser = new RouteParser();

    private String subject(String path) {
        return Subjects.subject(parser.parse(path).topic());
    }

    @Test
    void base32hexMatchesRfc4648TestVectors() {
        // RFC 4648 section 10, base32hex, lower case, padding removed.
        String[][] vectors = {{"", ""}, {"f", "co"}, {"fo", "cpng"}, {"foo", "cpnmu"}, {"foob", "cpnmuog"},
                {"fooba", "cpnmuoj1"}, {"foobar", "cpnmuoj1e8"}};
        for (String[] v : vectors) {
            assertEquals(v[1], Subjects.base32hex(v[0].getBytes(StandardCharsets.US_ASCII)), v[0]);
        }
    }

    @Test
    void wildcardsDotsAndSpacesAreOnlyThemselves() {
        List<String> paths = List.of("/>", "/*", "/a.*", "/a b", "/a.b", "/a/b", "/a", "/a.>", "/in/>", "/in/*",
                "/in/a.b", "/in/a/b", "/ünï/cødé", "/in/a b", "/a\tb".replace('\t', '_'));
        Map<String, String> seen = new HashMap<>();
        for (String p : paths) {
            String s = subject(p);
            String previous = seen.put(s, p);
            assertEquals(null, previous, p + " and " + previous + " share " + s);
            String[] tokens = s.split("\\.", -1);
            assertEquals(3, tokens.length, s);
            assertEquals("crossbar", tokens[0]);
            for (String t : tokens) {
                assertFalse(t.isEmpty(), s);
                assertTrue(t.matches("[0-9a-z]+"), "token '" + t + "' of " + s + " for " + p);
            }
        }
        assertEquals("crossbar.nn.t5tgisog", subject("/a.b"), "the example in docs/protocol.md");
        assertEquals("crossbar.1n.t7o", subject("/in/>"), "the example in docs/protocol.md");
        assertTrue(subject("/in/x").startsWith("crossbar.1n.t"));
        assertNotEquals(subject("/x"), subject("/in/x"));
        // A lossless topic's hold and ack subjects: apart from every topic subject and each other.
        TopicKey key = new TopicKey(dev.crossbar.core.schema.OneToMany.INSTANCE, "x");
        assertEquals("crossbar.ack.1n.tf0", Subjects.ackSubject(key));
        assertEquals("crossbar.hold.1n.tf0", Subjects.holdSubject(key));
        assertEquals("crossbar.1n.tf0", Subjects.subject(key));
    }

    @Test
    void longTopicsAreHashedAndStillDistinct() {
        String base = "/" + "l".repeat(250);
        String a = subject(base + "a");
        String b = subject(base + "b");
        assertNotEquals(a, b);
        assertTrue(Subjects.isHashed(a), a);
        assertEquals("crossbar.nn.h".length() + 52, a.length(), a);
        assertFalse(Subjects.isHashed(subject("/short")));
        // The longest direct token and the shortest hashed one sit either side of the limit.
        String edge = "/" + "x".repeat(123);
        assertFalse(Subjects.isHashed(subject(edge)), subject(edge));
        assertTrue(Subjects.isHashed(subject(edge + "x")));
        assertTrue(Subjects.subject(new TopicKey(parser.parse("/a").schema(), "é".repeat(70))).contains(".h"));
    }
}
