package dev.crossbar.server.cli;

import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.logging.Logs;
import java.io.PrintStream;
import java.util.Map;
import picocli.CommandLine.ParameterException;
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
        System.exit(run(System.getenv(), System.out, System.err, args));
    }

    /** As {@link #run(Map, PrintStream, PrintStream, String...)} with this process's environment and streams. */
    static int run(String... args) {
        return run(System.getenv(), System.out, System.err, args);
    }

    /**
     * Runs the command; returns the exit code: 0, 1 (could not start, e.g. the address is in use) or
     * 2 (bad configuration). Errors print one line, not a stack.
     */
    static int run(Map<String, String> env, PrintStream out, PrintStream err, String... args) {
        ConfigSources.Resolved resolved;
        try {
            resolved = ConfigSources.resolve(args, env);
        } catch (ParameterException e) {
            err.println("crossbar: " + e.getMessage() + " (see --help)");
            return 2;
        } catch (ConfigException e) {
            err.println("crossbar: " + e.getMessage());
            return 2;
        }
        CommandLine cl = resolved.commandLine();
        if (resolved.parsed().isUsageHelpRequested()) {
            cl.usage(out);
            return 0;
        }
        if (resolved.parsed().isVersionHelpRequested()) {
            cl.printVersionHelp(out);
            return 0;
        }
        if (resolved.command().printConfig) {
            try {
                resolved.command().toConfig();
            } catch (IllegalArgumentException e) {
                err.println("crossbar: " + explain(e, resolved));
                return 2;
            }
            out.print(PrintedConfig.render(resolved));
            return 0;
        }
        ServerConfig config;
        try {
            config = resolved.command().toConfig();
        } catch (IllegalArgumentException e) {
            err.println("crossbar: " + explain(e, resolved));
            return 2;
        }
        Logs.configure(config.logFormat(), config.logLevel(), config.auditLog());
        return resolved.command().run(() -> load(args, env));
    }

    /** The configuration as its sources say now: what a reload applies. */
    static ServerConfig load(String[] args, Map<String, String> env) {
        ConfigSources.Resolved r;
        try {
            r = ConfigSources.resolve(args, env);
        } catch (ParameterException | ConfigException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        try {
            return r.command().toConfig();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(explain(e, r), e);
        }
    }

    /**
     * A configuration error, with where its value came from when it names an option
     * ({@code --max-message: ...} from the file becomes {@code crossbar.yaml:3: --max-message: ...}).
     */
    static String explain(IllegalArgumentException e, ConfigSources.Resolved r) {
        String m = e.getMessage();
        int colon = m.indexOf(':');
        if (m.startsWith("--") && colon > 0) {
            ConfigSources.Origin o = r.origins().get(m.substring(0, colon));
            if (o != null && o.where() != null) {
                return o.where() + ": " + m;
            }
        }
        return m;
    }
}
