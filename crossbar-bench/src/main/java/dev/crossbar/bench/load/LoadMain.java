package dev.crossbar.bench.load;

import io.netty.util.ResourceLeakDetector;
import picocli.CommandLine;

/**
 * Entry point of the load generator:
 * {@code java -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.load.LoadMain --help}.
 */
public final class LoadMain {

    private LoadMain() {
    }

    public static void main(String[] args) {
        // Measuring, not debugging: leak tracking would cost the client CPU the relay needs.
        // (The tests run this code with paranoid leak detection instead.)
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        System.exit(run(args));
    }

    static int run(String... args) {
        CommandLine cmd = new CommandLine(new LoadCommand());
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        // The last of a repeated flag wins, so scripts can put common flags first and override them.
        cmd.setOverwrittenOptionsAllowed(true);
        cmd.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("load: " + ex.getMessage() + " (see --help)");
            return 2;
        });
        return cmd.execute(args);
    }
}
