package dev.crossbar.server.cli;

import dev.crossbar.server.pair.SessionConfig;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The flags of 1:1 sessions ({@code schema=session} streams); a picocli mixin of {@link CrossbarCommand}. */
final class SessionOptions {

    @Option(names = "--session-open-timeout", paramLabel = "DURATION", converter = Units.DurationConverter.class,
            defaultValue = "10s", description = "schema=session: how long a host has to open a session it was offered; "
                    + "then its client is closed with 1013 (default ${DEFAULT-VALUE}).")
    Duration openTimeout;

    @Option(names = "--max-pending-sessions", paramLabel = "N", defaultValue = "" + SessionConfig.DEFAULT_MAX_PENDING,
            description = "schema=session: sessions offered to hosts and not yet opened, relay-wide; "
                    + "a client beyond it is closed with 1013 (default ${DEFAULT-VALUE}).")
    int maxPending;

    SessionConfig toConfig() {
        return new SessionConfig(openTimeout, maxPending);
    }
}
