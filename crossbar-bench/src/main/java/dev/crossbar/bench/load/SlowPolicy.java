package dev.crossbar.bench.load;

import java.util.Locale;

/**
 * Which stream rule a spawned Crossbar runs every topic under: its default, which drops whole
 * messages for a receiver that falls behind its bound, or {@code slow=backpressure}, which holds the
 * publisher back instead (lossless 1:N). Crossbar's flag: other relays have no such rule.
 */
enum SlowPolicy {
    /** The relay as started: Crossbar's default, {@code slow=drop}. */
    DROP,
    /** {@code --route '/**:slow=backpressure'} appended to the relay's command. */
    BACKPRESSURE;

    /** Matches every stream, 1:N and N:N (a {@code **} matches any number of segments). */
    static final String ALL_STREAMS = "/**";

    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The {@code --route} rule this policy adds for the streams {@code pattern} matches, or null for none. */
    String rule(String pattern) {
        return this == DROP ? null : pattern + ":slow=backpressure";
    }

    /**
     * The spawn command with this policy's rule for {@code pattern} appended; the command ends in
     * the relay (it is exec'd), so the rule becomes the relay's last argument.
     */
    String apply(String spawnCommand, String pattern) {
        return this == DROP ? spawnCommand : spawnCommand + " --route '" + rule(pattern) + "'";
    }
}
