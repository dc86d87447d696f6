package dev.crossbar.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.schema.ManyToMany;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.schema.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RouteParserTest {

    private final RouteParser parser = new RouteParser(64);

    @Test
    void inAndOutShareOneToManyStream() {
        Route in = parser.parse("/in/cam1");
        Route out = parser.parse("/out/cam1");
        assertEquals(in.topic(), out.topic());
        assertEquals(OneToMany.INSTANCE, in.schema());
        assertEquals(Role.PUBLISHER, in.role());
        assertEquals(Role.SUBSCRIBER, out.role());
        assertTrue(in.canSend());
        assertTrue(out.canReceive());
        assertEquals("cam1", in.topic().name());
    }

    @Test
    void otherPathsAreManyToManyAndDistinctFromStreams() {
        Route nn = parser.parse("/cam1");
        assertEquals(ManyToMany.INSTANCE, nn.schema());
        assertEquals(Role.MEMBER, nn.role());
        assertNotEquals(parser.parse("/in/cam1").topic(), nn.topic());
        assertNotEquals(parser.parse("/in/a").topic(), parser.parse("/out/b").topic());
    }

    @Test
    void normalisesSlashesLikeTheOriginal() {
        assertEquals("/a/b", parser.parse("a/b/").path());
        assertEquals("/a/b", parser.parse("//a///b//").path());
        assertEquals(parser.parse("/in/x/").topic(), parser.parse("/in/x").topic());
        assertEquals("x/y", parser.parse("/in//x/y/").topic().name());
    }

    @Test
    void keepsWildcardsAndSpacesAsPlainCharacters() {
        assertEquals("/a b/>/*", parser.parse("/a b/>/*").path());
        assertEquals("/ünï/日本", parser.parse("/ünï/日本").path());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/", "///", "/in", "/in/", "/out//", "/a/../b", "/./a", "/a\u0000b", "/a\nb",
            "/a\u007fb", "/bad\uFFFD", "/x\uD800"})
    void refusesBadPathsWithAReason(String path) {
        InvalidRouteException e = assertThrows(InvalidRouteException.class, () -> parser.parse(path));
        assertTrue(!e.getMessage().isBlank());
    }

    @Test
    void refusesLongPathsNamingTheLimit() {
        parser.parse("/" + "a".repeat(63));
        InvalidRouteException e = assertThrows(InvalidRouteException.class, () -> parser.parse("/" + "a".repeat(64)));
        assertEquals("path too long: 65 characters (expected: <= 64)", e.getMessage());
    }
}
