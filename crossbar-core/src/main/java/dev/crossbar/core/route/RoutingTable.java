package dev.crossbar.core.route;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The stream rules, first match wins; a stream no rule matches gets {@link StreamOptions#DEFAULT}.
 * Looked up once per new topic ({@link #resolve}), so the number of rules never costs a message
 * anything.
 */
public final class RoutingTable {

    /** No rules: every stream behaves as it did before there were rules. */
    public static final RoutingTable EMPTY = new RoutingTable(List.of());

    private final List<StreamRule> rules;
    private final boolean sessions;

    public RoutingTable(List<StreamRule> rules) {
        this.rules = List.copyOf(rules);
        this.sessions = this.rules.stream().anyMatch(r -> r.options().session());
    }

    /** Whether any rule makes streams {@code schema=session}: without one, no upgrade looks further. */
    public boolean hasSessions() {
        return sessions;
    }

    public List<StreamRule> rules() {
        return rules;
    }

    /** The first rule whose pattern matches the topic's stream name, or null for the default. */
    public StreamRule ruleFor(TopicKey topic) {
        String name = streamName(topic);
        for (StreamRule r : rules) {
            if (r.pattern().matches(name)) {
                return r;
            }
        }
        return null;
    }

    /** The options of the topic's stream: its rule's, or the default. */
    public StreamOptions resolve(TopicKey topic) {
        StreamRule rule = ruleFor(topic);
        return rule == null ? StreamOptions.DEFAULT : rule.options();
    }

    /** The name rules match: an N:N topic's path; a 1:N stream's path without /in or /out. */
    public static String streamName(TopicKey topic) {
        String name = topic.name();
        return name.startsWith("/") ? name : "/" + name;
    }

    /**
     * Reads rules, one per line; blank lines and text after {@code #} are ignored.
     *
     * @throws InvalidRuleException naming the file and line of the first bad rule
     */
    public static List<StreamRule> readFile(Path file) throws IOException {
        List<StreamRule> out = new ArrayList<>();
        int n = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            n++;
            int hash = line.indexOf('#');
            String rule = (hash >= 0 ? line.substring(0, hash) : line).trim();
            if (!rule.isEmpty()) {
                out.add(StreamRule.parse(rule, file + ":" + n));
            }
        }
        return out;
    }

    /** Parses {@code --route} values in order, each named by its position for errors. */
    public static List<StreamRule> parseAll(List<String> texts) {
        List<StreamRule> out = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) {
            out.add(StreamRule.parse(texts.get(i), "--route #" + (i + 1)));
        }
        return out;
    }
}
