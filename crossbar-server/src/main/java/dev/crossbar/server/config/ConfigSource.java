package dev.crossbar.server.config;

/**
 * Where a running relay reads its configuration again (SIGHUP, {@code POST /admin/reload}): the
 * command line's sources, the configuration file re-read.
 */
@FunctionalInterface
public interface ConfigSource {

    /**
     * The configuration as its sources say now.
     *
     * @throws IllegalArgumentException with one line naming the bad value and where it came from
     */
    ServerConfig load();

    /** A configuration that never changes: a reload finds nothing to apply. */
    static ConfigSource fixed(ServerConfig config) {
        return () -> config;
    }
}
