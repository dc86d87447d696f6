package dev.crossbar.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.Test;

/** The architecture rules can fail: a cycle kept on purpose among test classes is found and named. */
class ArchitectureRulesTest {

    @Test
    void aPackageCycleIsFoundAndNamed() {
        JavaClasses canary = new ClassFileImporter().importPackages("dev.crossbar.testing.archcanary");
        EvaluationResult result = ArchitectureRules.noPackageCycles("dev.crossbar.testing.archcanary").evaluate(canary);
        assertTrue(result.hasViolation(), "the deliberate cycle a <-> b was not reported");
        String report = result.getFailureReport().toString();
        assertTrue(report.contains("archcanary.a") && report.contains("archcanary.b"), report);
    }

    @Test
    void theCoreHasNoCycle() {
        JavaClasses core = ArchitectureRules.mainClasses("dev.crossbar.core");
        EvaluationResult result = ArchitectureRules.noPackageCycles("dev.crossbar").evaluate(core);
        assertFalse(result.hasViolation(), () -> result.getFailureReport().toString());
        EvaluationResult alone = ArchitectureRules.coreStandsAlone().evaluate(core);
        assertFalse(alone.hasViolation(), () -> alone.getFailureReport().toString());
    }
}
