package dev.crossbar.server.cli;

import dev.crossbar.core.replay.ReplayLimits;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.SendLimits;
import dev.crossbar.core.route.StreamRule;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The routing table's flags (a picocli mixin of {@link CrossbarCommand}): rules that give streams
 * options by name, and the bounds on what a topic keeps for newcomers. {@code --route} rules come
 * before the file's, so a rule on the command line overrides the file's for the streams it matches.
 */
final class RoutingOptions {

    @Option(names = "--route", paramLabel = "PATTERN:KEY=VALUE[,...]",
            description = "A stream rule, repeatable, first match wins, e.g. '/cam/*:start=keyframe,max-latency=500ms'. "
                    + "Keys: start=live|keyframe|last, max-latency=DURATION. See docs/protocol.md.")
    List<String> routes = new ArrayList<>();

    @Option(names = "--routes", paramLabel = "FILE",
            description = "A file of stream rules, one per line, # comments; after the --route rules.")
    Path routesFile;

    @Option(names = "--last-values", paramLabel = "N", description = "start=last: publishers per topic whose last message is kept (default ${DEFAULT-VALUE}).")
    int lastValues;

    @Option(names = "--last-values-size", paramLabel = "SIZE", converter = UnitConverters.BytesConverter.class,
            description = "start=last: bytes kept per topic in all (default ${DEFAULT-VALUE}).")
    long lastValuesSize;

    @Option(names = "--keyframe-buffer", paramLabel = "SIZE", converter = UnitConverters.BytesConverter.class,
            description = "start=keyframe: bytes kept per publisher since its last keyframe; "
                    + "a longer group of pictures is not kept (newcomers start live) (default ${DEFAULT-VALUE}).")
    long keyframeBuffer;

    @Option(names = "--latency-send-buffer", paramLabel = "SIZE", converter = UnitConverters.IntBytesConverter.class,
            description = "max-latency streams: a receiver's socket send buffer (Linux doubles it); "
                    + "what waits longer waits where stale messages can be skipped. Larger carries more per round trip "
                    + "(default ${DEFAULT-VALUE}: 1.3 Mbit/s at 50 ms).")
    int latencySendBuffer;

    @Option(names = "--backpressure-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "slow=backpressure streams: a receiver holding the senders back that reads "
                    + "nothing for this long is closed with 1013 (default ${DEFAULT-VALUE}).")
    java.time.Duration backpressureTimeout;

    @Option(names = "--rate-limit", paramLabel = "RATE",
            description = "Messages per second each sender may send (e.g. 50/s), where its stream's rule sets no rate= "
                    + "of its own; off: no limit (default ${DEFAULT-VALUE}).")
    String rateLimit;

    @Option(names = "--rate-burst", paramLabel = "N",
            description = "Messages a sender may send at once before --rate-limit applies; 0: one second's worth "
                    + "(default ${DEFAULT-VALUE}).")
    int rateBurst;

    @Option(names = "--bandwidth-limit", paramLabel = "BITRATE",
            description = "Payload bits per second each sender may send (e.g. 2Mbit), where its stream's rule sets no "
                    + "bandwidth= of its own; off: no limit (default ${DEFAULT-VALUE}).")
    String bandwidthLimit;

    @Option(names = "--over-limit", paramLabel = "drop|close",
            description = "A message over its sender's rate or bandwidth: dropped and counted, or the sender closed "
                    + "with 1008 (default ${DEFAULT-VALUE}; a rule's over-limit= wins).")
    String overLimit;

    /** The senders' limits where a rule sets none; a bad value throws naming the flag. */
    SendLimits sendLimits() {
        SendLimits l = SendLimits.UNSET;
        l = parse(l, "--rate-limit", "rate", rateLimit);
        l = rateBurst > 0 ? parse(l, "--rate-burst", "burst", Integer.toString(rateBurst)) : l;
        l = parse(l, "--bandwidth-limit", "bandwidth", bandwidthLimit);
        l = parse(l, "--over-limit", "over-limit", overLimit);
        return l.withDefaults(SendLimits.NONE);
    }

    private static SendLimits parse(SendLimits l, String flag, String key, String value) {
        try {
            return SendLimits.parse(l, key, value.trim().toLowerCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
    }

    /** The rules, in order; a bad one throws {@link IllegalArgumentException} naming where it is. */
    RoutingTable table() {
        List<StreamRule> rules = new ArrayList<>(RoutingTable.parseAll(routes));
        if (routesFile != null) {
            try {
                rules.addAll(RoutingTable.readFile(routesFile));
            } catch (IOException e) {
                throw new IllegalArgumentException("--routes " + routesFile + ": cannot read (" + e + ")");
            }
        }
        return new RoutingTable(rules);
    }

    ReplayLimits limits() {
        if (lastValues < 1 || lastValuesSize < 1 || keyframeBuffer < 1) {
            throw new IllegalArgumentException("--last-values, --last-values-size and --keyframe-buffer must be > 0");
        }
        return new ReplayLimits(lastValues, lastValuesSize, keyframeBuffer);
    }
}
