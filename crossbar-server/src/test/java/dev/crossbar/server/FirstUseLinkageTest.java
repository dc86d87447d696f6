package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.stats.DepartedTraffic;
import dev.crossbar.testing.ArchitectureRules;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What keeps a fresh relay's first clients from waiting for the JVM to link call sites (measured
 * in docs/benchmarks.md, Cold): the relay's classes as built concatenate strings without
 * invokedynamic (the compiler flag in the root pom), and the records looked up while a client
 * joins or leaves have equals and hashCode of their own rather than a record's linked ones.
 * Read from the compiled class files' constant pools, where either would name its bootstrap.
 */
class FirstUseLinkageTest {

    private static final String CONCAT_BOOTSTRAP = "makeConcatWithConstants";
    private static final String RECORD_BOOTSTRAP = "java/lang/runtime/ObjectMethods";

    @Test
    void noClassOfTheRelayConcatenatesThroughInvokedynamic() throws IOException {
        JavaClasses classes = ArchitectureRules.mainClasses("dev.crossbar.core", "dev.crossbar.server");
        List<String> offenders = new ArrayList<>();
        for (JavaClass c : classes) {
            if (constantPool(c.getSource().orElseThrow().getUri().toURL()).contains(CONCAT_BOOTSTRAP)) {
                offenders.add(c.getName());
            }
        }
        assertTrue(classes.size() > 100, "found the relay's classes");
        assertEquals(List.of(), offenders, "built without -XDstringConcat=inline");
    }

    @Test
    void theKeysOfJoiningAndLeavingLinkNothingOnFirstUse() throws IOException {
        for (Class<?> key : List.of(TopicKey.class, DepartedTraffic.Kind.class)) {
            String file = key.getName().substring(key.getPackageName().length() + 1) + ".class";
            String pool = constantPool(key.getResource(file));
            assertTrue(pool.contains(key.getSimpleName()), "read " + key.getName());
            assertFalse(pool.contains(RECORD_BOOTSTRAP), key.getName() + " uses a record's linked equals or hashCode");
        }
    }

    /** The class file as Latin-1 text: its constant pool's names are in it verbatim. */
    private static String constantPool(URL classFile) throws IOException {
        try (InputStream in = classFile.openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
