package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fat jar as it is shipped (failsafe runs this after {@code package}): it carries Crossbar's
 * licence and the list of the libraries inside it with theirs, and says its version; the
 * class-data-sharing archive the build made beside it serves the README's command.
 */
class ReleaseJarIT {

    private static final Path JAR = Path.of(System.getProperty("crossbar.jar", "target/crossbar.jar"));
    private static final String VERSION = System.getProperty("crossbar.version", "");

    @TempDir
    Path dir;

    private static byte[] entry(JarFile jar, String name) throws Exception {
        ZipEntry e = jar.getEntry(name);
        assertNotNull(e, JAR + " has no " + name);
        try (var in = jar.getInputStream(e)) {
            return in.readAllBytes();
        }
    }

    @Test
    void theJarCarriesCrossbarsLicenceAndItsLibrariesWithTheirs() throws Exception {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            assertArrayEquals(Files.readAllBytes(Path.of("..", "LICENSE")), entry(jar, "LICENSE"),
                    "the jar's LICENSE is the repository's");
            String list = new String(entry(jar, "META-INF/THIRD-PARTY.txt"), StandardCharsets.UTF_8);
            List<String> lines = list.lines().filter(l -> l.startsWith("     (")).toList();
            assertTrue(lines.size() >= 20, "libraries listed: " + lines.size() + "\n" + list);
            // What the relay is made of, each with its licence in front.
            for (String library : List.of("io.netty:netty-codec-http:", "io.netty:netty-handler:",
                    "com.fasterxml.jackson.core:jackson-databind:", "info.picocli:picocli:",
                    "io.micrometer:micrometer-registry-prometheus:", "com.nimbusds:nimbus-jose-jwt:",
                    "io.nats:jnats:", "org.slf4j:slf4j-api:")) {
                String line = lines.stream().filter(l -> l.contains("(" + library)).findFirst()
                        .orElseThrow(() -> new AssertionError(library + " is not in META-INF/THIRD-PARTY.txt:\n" + list));
                assertTrue(line.matches("\\s+\\((Apache|The Apache|MIT).*"), "licence of " + library + ": " + line);
            }
            // Only what ships: no test library, and not Crossbar's own module.
            for (String absent : List.of("junit", "jazzer", "bcpkix", "archunit", "dev.crossbar:")) {
                assertFalse(list.contains(absent), absent + " is listed but not in the jar:\n" + list);
            }
            // Every listed library has a licence the build found in its POM.
            assertFalse(list.contains("Unknown license"), list);
            // And the dependencies' own licence texts are still there (appended by the shade plugin).
            assertTrue(new String(entry(jar, "META-INF/LICENSE"), StandardCharsets.UTF_8).contains("Apache License"));
        }
    }

    @Test
    void versionPrintsTheReleaseVersion() throws Exception {
        assertFalse(VERSION.isEmpty(), "failsafe passes crossbar.version");
        Path out = dir.resolve("version.txt");
        Process java = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString(), "--version").redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(java.waitFor(30, TimeUnit.SECONDS), "java -jar --version did not end");
        assertEquals(0, java.exitValue(), Files.readString(out));
        assertEquals("crossbar " + VERSION, Files.readString(out).strip());
    }

    @Test
    void theBuildsClassDataArchiveServesTheJar() throws Exception {
        Path archive = JAR.resolveSibling("crossbar.jsa");
        assertTrue(Files.isRegularFile(archive), "the build made no " + archive);
        Path out = dir.resolve("classes.txt");
        // As the README's command gives it; -Xlog says where each class came from.
        Process java = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:SharedArchiveFile=" + archive, "-Xlog:class+load=info", "-jar", JAR.toString(), "--version")
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(java.waitFor(30, TimeUnit.SECONDS), "java -jar --version did not end");
        String log = Files.readString(out);
        assertEquals(0, java.exitValue(), log);
        assertFalse(log.contains("Unable to use shared archive"), log);
        assertTrue(log.contains("dev.crossbar.server.cli.Main source: shared objects file (top)"),
                "the relay's classes did not come from the archive:\n" + log.lines().filter(l -> l.contains("dev.crossbar")).toList());
    }
}
