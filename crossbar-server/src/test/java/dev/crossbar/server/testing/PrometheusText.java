package dev.crossbar.server.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict parser for the Prometheus text exposition format (0.0.4), written for the tests so
 * that {@code /metrics} is checked against the format, not against what our own library emits:
 * every line must be a comment, a {@code # HELP}/{@code # TYPE} line or a well-formed sample; a
 * family's TYPE comes before its samples and only once; label values are unescaped.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Set<String> TYPES = Set.of("counter", "gauge", "histogram", "summary", "untyped");
    private static final String[] SUFFIXES = {"_total", "_created", "_count", "_sum", "_bucket", "_info"};

    private final List<Sample> samples = new ArrayList<>();
    private final Map<String, String> types = new HashMap<>();

    private PrometheusText() {
    }

    /** @throws AssertionError naming the line that is not valid exposition text */
    public static PrometheusText parse(String text) {
        PrometheusText p = new PrometheusText();
        String[] lines = text.split("\n", -1);
        if (!text.isEmpty() && !text.endsWith("\n")) {
            throw new AssertionError("exposition must end with a newline");
        }
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.isEmpty()) {
                continue;
            }
            try {
                if (line.startsWith("#")) {
                    p.comment(line);
                } else {
                    p.sample(line);
                }
            } catch (RuntimeException e) {
                throw new AssertionError("line " + (i + 1) + " is not valid Prometheus text: " + line + " (" + e.getMessage() + ")", e);
            }
        }
        return p;
    }

    private void comment(String line) {
        String[] parts = line.split(" ", 4);
        if (parts.length >= 3 && parts[1].equals("TYPE")) {
            require(NAME.matcher(parts[2]).matches(), "bad metric name");
            require(parts.length == 4 && TYPES.contains(parts[3]), "bad type");
            require(!types.containsKey(parts[2]), "TYPE given twice");
            require(samples.stream().noneMatch(s -> family(s.name()).equals(parts[2]) || s.name().equals(parts[2])),
                    "TYPE after samples");
            types.put(parts[2], parts[3]);
        } else if (parts.length >= 3 && parts[1].equals("HELP")) {
            require(NAME.matcher(parts[2]).matches(), "bad metric name");
        }
    }

    private void sample(String line) {
        Matcher m = NAME.matcher(line);
        require(m.lookingAt(), "no metric name");
        String name = m.group();
        int i = m.end();
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i = labels(line, i + 1, labels);
        }
        require(i < line.length() && line.charAt(i) == ' ', "no space before value");
        String[] rest = line.substring(i + 1).split(" ");
        require(rest.length == 1 || rest.length == 2, "expected a value and an optional timestamp");
        double value = switch (rest[0]) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(rest[0]);
        };
        if (rest.length == 2) {
            Long.parseLong(rest[1]);
        }
        require(types.containsKey(name) || types.containsKey(family(name)), "sample before its TYPE");
        samples.add(new Sample(name, labels, value));
    }

    private static int labels(String line, int i, Map<String, String> out) {
        while (true) {
            require(i < line.length(), "unterminated labels");
            if (line.charAt(i) == '}') {
                return i + 1;
            }
            Matcher n = LABEL_NAME.matcher(line).region(i, line.length());
            require(n.lookingAt(), "bad label name");
            String label = n.group();
            i = n.end();
            require(line.startsWith("=\"", i), "expected =\" after label name");
            i += 2;
            StringBuilder v = new StringBuilder();
            while (true) {
                require(i < line.length(), "unterminated label value");
                char c = line.charAt(i++);
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    require(i < line.length(), "dangling escape");
                    char e = line.charAt(i++);
                    v.append(switch (e) {
                        case 'n' -> '\n';
                        case '\\' -> '\\';
                        case '"' -> '"';
                        default -> throw new IllegalArgumentException("bad escape \\" + e);
                    });
                } else {
                    v.append(c);
                }
            }
            require(out.put(label, v.toString()) == null, "label given twice");
            if (i < line.length() && line.charAt(i) == ',') {
                i++;
            }
        }
    }

    private static String family(String name) {
        for (String s : SUFFIXES) {
            if (name.endsWith(s)) {
                return name.substring(0, name.length() - s.length());
            }
        }
        return name;
    }

    private static void require(boolean ok, String why) {
        if (!ok) {
            throw new IllegalArgumentException(why);
        }
    }

    public List<Sample> samples() {
        return samples;
    }

    /** The declared type of a family, or null. */
    public String type(String family) {
        return types.get(family);
    }

    /** The value of the one sample named {@code name} whose labels include {@code labels}. */
    public double value(String name, String... labels) {
        List<Sample> found = new ArrayList<>();
        for (Sample s : samples) {
            if (!s.name().equals(name)) {
                continue;
            }
            boolean match = true;
            for (int i = 0; i < labels.length; i += 2) {
                match &= labels[i + 1].equals(s.labels().get(labels[i]));
            }
            if (match) {
                found.add(s);
            }
        }
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " samples of " + name + " with " + String.join(",", labels));
        }
        return found.get(0).value();
    }

    /** Whether any sample has this name. */
    public boolean has(String name) {
        return samples.stream().anyMatch(s -> s.name().equals(name));
    }
}
