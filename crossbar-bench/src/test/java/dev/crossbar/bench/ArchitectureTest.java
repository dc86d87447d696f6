package dev.crossbar.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.tngtech.archunit.lang.EvaluationResult;
import dev.crossbar.testing.ArchitectureRules;
import org.junit.jupiter.api.Test;

/** The benchmarks' packages, with the relay's beneath them, have no package cycle ({@link ArchitectureRules}). */
class ArchitectureTest {

    @Test
    void noPackageCycle() {
        EvaluationResult result = ArchitectureRules.noPackageCycles("dev.crossbar")
                .evaluate(ArchitectureRules.mainClasses("dev.crossbar"));
        assertFalse(result.hasViolation(), () -> result.getFailureReport().toString());
    }
}
