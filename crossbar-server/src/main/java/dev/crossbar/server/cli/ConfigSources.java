package dev.crossbar.server.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine;

/**
 * The relay's configuration from its three sources: flags, then the environment
 * ({@code CROSSBAR_<OPTION>}), then the configuration file ({@code --config}), then the defaults.
 *
 * <p>How: the flags are parsed first, to learn which options they set and where the file is; every
 * other option found in the environment or the file becomes a flag of its own ({@code --x=value}),
 * and the whole is parsed again. So each value goes through the same converter and checks whatever
 * its source, and an error names that source: the flag, the variable, or the file and line.
 */
final class ConfigSources {

    /** Environment variables are this and the option's name, upper case, dashes as underscores. */
    static final String ENV_PREFIX = "CROSSBAR_";
    /** Options that choose what the command does, not how the relay runs: never from the environment or file. */
    static final Set<String> COMMAND_OPTIONS = Set.of("--help", "--version", "--config", "--print-config");

    /** What gave an option its value. */
    enum Kind {
        FLAG, ENVIRONMENT, FILE, DEFAULT, UNSET
    }

    /** Where an option's value came from: the kind, and the variable or file and line. */
    record Origin(Kind kind, String where) {
        @Override
        public String toString() {
            return where == null ? kind.name().toLowerCase(Locale.ROOT) : kind.name().toLowerCase(Locale.ROOT) + " " + where;
        }
    }

    /** The parsed command, and the origin of each option (by its long name). */
    record Resolved(CommandLine commandLine, CrossbarCommand command, ParseResult parsed, Map<String, Origin> origins) {
    }

    private ConfigSources() {
    }

    /**
     * Resolves {@code args} and {@code env} (and the file they name).
     *
     * @throws ParameterException for a bad flag (a usage error)
     * @throws ConfigException for a bad value from the environment or the file, naming where it is
     */
    static Resolved resolve(String[] args, Map<String, String> env) {
        CommandLine flagsOnly = commandLine(env);
        ParseResult flags = flagsOnly.parseArgs(args);
        if (flags.isUsageHelpRequested() || flags.isVersionHelpRequested()) {
            return new Resolved(flagsOnly, flagsOnly.getCommand(), flags, Map.of());
        }
        CrossbarCommand given = flagsOnly.getCommand();
        Path configPath = given.configFile != null ? given.configFile
                : env.containsKey(ENV_PREFIX + "CONFIG") && !env.get(ENV_PREFIX + "CONFIG").isEmpty()
                ? Path.of(env.get(ENV_PREFIX + "CONFIG")) : null;
        ConfigFile file = configPath == null ? ConfigFile.none() : ConfigFile.read(configPath);
        List<OptionSpec> options = settings(flagsOnly);
        checkKeys(file, options);

        List<String> implied = new ArrayList<>();
        Map<String, Origin> origins = new LinkedHashMap<>();
        for (OptionSpec o : options) {
            String name = o.longestName();
            if (flags.hasMatchedOption(o)) {
                origins.put(name, new Origin(Kind.FLAG, null));
                continue;
            }
            String var = envName(o);
            String fromEnv = env.get(var);
            if (fromEnv != null && !fromEnv.isEmpty()) {
                implied.addAll(asFlags(o, envValues(o, fromEnv), new Origin(Kind.ENVIRONMENT, var)));
                origins.put(name, new Origin(Kind.ENVIRONMENT, var));
                continue;
            }
            ConfigFile.Entry entry = file.entries().get(key(o));
            if (entry != null) {
                Origin at = new Origin(Kind.FILE, file.where(entry));
                if (entry.list() && !o.isMultiValue()) {
                    throw new ConfigException(at.where() + ": " + entry.key() + ": one value expected, not a list");
                }
                implied.addAll(asFlags(o, entry.values(), at));
                origins.put(name, at);
                continue;
            }
            origins.put(name, new Origin(OptionDefaults.DEFAULTS.containsKey(name) ? Kind.DEFAULT : Kind.UNSET, null));
        }

        CommandLine merged = commandLine(env);
        List<String> all = new ArrayList<>(implied);
        all.addAll(List.of(args));
        ParseResult parsed;
        try {
            parsed = merged.parseArgs(all.toArray(new String[0]));
        } catch (ParameterException e) {
            Origin from = originOf(e.getArgSpec(), origins);
            if (from == null || from.kind() == Kind.FLAG) {
                throw e;
            }
            throw new ConfigException(from.where() + ": " + key((OptionSpec) e.getArgSpec()) + ": " + e.getMessage());
        }
        return new Resolved(merged, merged.getCommand(), parsed, origins);
    }

    /** The command line of a fresh command that reads {@code env}. */
    static CommandLine commandLine(Map<String, String> env) {
        CrossbarCommand command = new CrossbarCommand();
        command.env = env;
        CommandLine cl = new CommandLine(command);
        cl.setUnmatchedOptionsArePositionalParams(false);
        return cl;
    }

    /** The options that are settings of the relay, in the order of {@code --help}. */
    static List<OptionSpec> settings(CommandLine cl) {
        List<OptionSpec> out = new ArrayList<>();
        for (OptionSpec o : cl.getCommandSpec().options()) {
            if (!COMMAND_OPTIONS.contains(o.longestName())) {
                out.add(o);
            }
        }
        return out;
    }

    /** The option's key in the file: its long name without dashes. */
    static String key(OptionSpec o) {
        return o.longestName().substring(2);
    }

    /** The option's environment variable: {@code --max-message} is {@code CROSSBAR_MAX_MESSAGE}. */
    static String envName(OptionSpec o) {
        return ENV_PREFIX + key(o).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /**
     * An environment variable's values: one, or for an option that takes several without a
     * separator of its own ({@code --route}, whose rules contain commas), one per line.
     */
    private static List<String> envValues(OptionSpec o, String value) {
        return o.isMultiValue() && o.splitRegex().isEmpty() ? value.lines().filter(l -> !l.isBlank()).toList()
                : List.of(value);
    }

    /** {@code values} as flags of {@code o}; a boolean is on ({@code true}) or left off ({@code false}). */
    private static List<String> asFlags(OptionSpec o, List<String> values, Origin from) {
        List<String> out = new ArrayList<>();
        for (String v : values) {
            if (o.arity().max() == 0) {
                String b = v.trim().toLowerCase(Locale.ROOT);
                if (!b.equals("true") && !b.equals("false")) {
                    throw new ConfigException(from.where() + ": " + key(o) + ": '" + v + "' (expected: true or false)");
                }
                if (b.equals("true")) {
                    out.add(o.longestName());
                }
            } else {
                out.add(o.longestName() + "=" + v);
            }
        }
        return out;
    }

    /** Every key of the file must be an option: a typo must not pass for a default. */
    private static void checkKeys(ConfigFile file, List<OptionSpec> options) {
        for (ConfigFile.Entry e : file.entries().values()) {
            if (options.stream().noneMatch(o -> key(o).equals(e.key()))) {
                String near = options.stream().map(ConfigSources::key)
                        .min(Comparator.comparingInt(k -> distance(k, e.key()))).orElse("");
                String hint = distance(near, e.key()) <= 3 ? "; did you mean " + near + "?" : "";
                throw new ConfigException(file.where(e) + ": " + e.key() + ": unknown key (expected: an option of "
                        + "--help without its dashes" + hint + ")");
            }
        }
    }

    private static Origin originOf(ArgSpec spec, Map<String, Origin> origins) {
        return spec instanceof OptionSpec o ? origins.get(o.longestName()) : null;
    }

    /** Edit distance, for "did you mean". */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
