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

    /**
     * docs/packages.md holds the package graph as the compiled classes have it, so the drawing
     * cannot go stale: this fails when it differs, and writes it anew when run with
     * {@code -Dcrossbar.updateDocs=true}.
     */
    @Test
    void thePackageDrawingInTheDocsIsCurrent() throws Exception {
        java.nio.file.Path doc = java.nio.file.Path.of("..", "docs", "packages.md");
        String drawn = PackageGraph.of(classes).markdown();
        if (Boolean.getBoolean("crossbar.updateDocs")) {
            java.nio.file.Files.writeString(doc, drawn);
        }
        String committed = java.nio.file.Files.exists(doc) ? java.nio.file.Files.readString(doc) : "";
        org.junit.jupiter.api.Assertions.assertEquals(drawn, committed, "docs/packages.md is stale; write it anew with "
                + "./mvnw -B -ntp -pl crossbar-server -am test -Dtest=ArchitectureTest -Dsurefire.failIfNoSpecifiedTests=false "
                + "-Dcrossbar.updateDocs=true");
    }

    private static void check(ArchRule rule) {
        EvaluationResult result = rule.evaluate(classes);
        assertFalse(result.hasViolation(), () -> result.getFailureReport().toString());
    }
}
