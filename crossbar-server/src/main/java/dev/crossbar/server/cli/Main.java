package dev.crossbar.server.cli;

import picocli.CommandLine;

/** Entry point of the fat jar: {@code java -jar crossbar.jar --help}. */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        // Netty registers JFR event classes for its allocator when JFR is present: ~100 classes and
        // a few MB the relay does not use. An operator who profiles can pass -Dio.netty.jfr.enabled=true.
        if (System.getProperty("io.netty.jfr.enabled") == null) {
            System.setProperty("io.netty.jfr.enabled", "false");
        }
        // With the jar's Add-Opens (java.base/java.nio), Netty then allocates direct memory itself
        // (malloc, freed on release) instead of through ByteBuffer.allocateDirect, which zeroes each
        // buffer: a pass over every large message's bytes that the relay overwrites anyway.
        if (System.getProperty("io.netty.tryReflectionSetAccessible") == null) {
            System.setProperty("io.netty.tryReflectionSetAccessible", "true");
        }
        System.exit(run(args));
    }

    /** Runs the command; returns the exit code. Bad flags print one line and a hint, not a stack. */
    static int run(String... args) {
        CommandLine cmd = new CommandLine(new CrossbarCommand());
        cmd.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("crossbar: " + ex.getMessage() + " (see --help)");
            return 2;
        });
        return cmd.execute(args);
    }
}
