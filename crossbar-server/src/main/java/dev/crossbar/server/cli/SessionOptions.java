package dev.crossbar.server.cli;

import dev.crossbar.server.config.SessionConfig;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The flags of 1:1 sessions ({@code schema=session} streams); a picocli mixin of {@link CrossbarCommand}. */
final class SessionOptions {

    @Option(names = "--session-open-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "schema=session: how long a host has to open a session it was offered; "
                    + "then its client is closed with 1013 (default ${DEFAULT-VALUE}).")
    Duration openTimeout;

    @Option(names = "--max-pending-sessions", paramLabel = "N", description = "schema=session: sessions offered to hosts and not yet opened, relay-wide; "
                    + "a client beyond it is closed with 1013 (default ${DEFAULT-VALUE}).")
    int maxPending;

    @Option(names = "--session-url", paramLabel = "URL",
            description = "schema=session in a cluster: this node's address as hosts reach it (e.g. wss://node-a.example.org); "
                    + "hosts on other nodes open sessions of this node's clients there (default: ws(s)://<listen address>).")
    String url;

    @Option(names = "--session-full-client-details",
            description = "schema=session: a host's session offer names the client's whole address "
                    + "(default ${DEFAULT-VALUE}: truncated to /24 or /48; the token's sub is always given).")
    boolean fullClientDetails;

    SessionConfig toConfig() {
        return new SessionConfig(openTimeout, maxPending, url, fullClientDetails);
    }
}
