package dev.crossbar.testing;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The rules that keep Crossbar's package graph readable in the order of the data flow, shared by
 * every module's {@code ArchitectureTest} (each checks the classes on its own classpath, so the
 * server's test sees core and server together).
 */
public final class ArchitectureRules {

    private ArchitectureRules() {
    }

    /**
     * The production classes of {@code packages} on the classpath: not tests, whether they come from
     * a module's test classes or from another module's test jar.
     */
    public static JavaClasses mainClasses(String... packages) {
        return new ClassFileImporter()
                .withImportOption(location -> !location.contains("/test-classes/") && !location.contains("-tests.jar"))
                .importPackages(packages);
    }

    /**
     * No package cycle: each package of every module (the root package of a module counts as one)
     * is a slice, and no slice may reach itself again through the others. A failure names the cycle.
     */
    public static ArchRule noPackageCycles(String basePackage) {
        return slices().matching(basePackage + ".(**)").should().beFreeOfCycles();
    }

    /** The core is the relay without its sockets: nothing of the server, the benchmarks, NATS or Netty's transport. */
    public static ArchRule coreStandsAlone() {
        return noClasses().that().resideInAPackage("dev.crossbar.core..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "dev.crossbar.server..", "dev.crossbar.bench..", "io.netty.channel..", "io.netty.bootstrap..",
                        "io.nats..")
                .as("crossbar-core depends on nothing of the server, the benchmarks, NATS or Netty's transport");
    }

    /** The NATS client (jnats) is the cluster package's business alone. */
    public static ArchRule natsOnlyInCluster() {
        return noClasses().that().resideOutsideOfPackage("dev.crossbar.server.cluster..")
                .should().dependOnClassesThat().resideInAPackage("io.nats..")
                .allowEmptyShould(true)
                .as("only dev.crossbar.server.cluster uses jnats (io.nats)");
    }
}
