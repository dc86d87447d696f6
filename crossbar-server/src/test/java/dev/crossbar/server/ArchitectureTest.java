package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.crossbar.testing.ArchitectureRules;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package graph of core and server together, from the compiled classes: no cycle, the core
 * free of the server and of Netty's transport, jnats only in the cluster package
 * ({@link ArchitectureRules}; its own test proves the cycle rule fails on a cycle).
 */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = ArchitectureRules.mainClasses("dev.crossbar.core", "dev.crossbar.server");
    }

    @Test
    void noPackageCycle() {
        check(ArchitectureRules.noPackageCycles("dev.crossbar"));
    }

    @Test
    void coreStandsAlone() {
        check(ArchitectureRules.coreStandsAlone());
    }

    @Test
    void natsOnlyInTheClusterPackage() {
        check(ArchitectureRules.natsOnlyInCluster());
    }

    private static void check(ArchRule rule) {
        EvaluationResult result = rule.evaluate(classes);
        assertFalse(result.hasViolation(), () -> result.getFailureReport().toString());
    }
}
