package dev.crossbar.server.config;

/** What happens to a receiver whose outbound buffer is over its high-water mark. */
public enum SlowConsumerPolicy {
    /** Drop whole messages for it (and count them) until it drains below the low-water mark. */
    DROP,
    /** Drop as above, and close it (1013) if it is still over the mark after the grace period. */
    DISCONNECT;

    /** The name on the command line and in the configuration file. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
