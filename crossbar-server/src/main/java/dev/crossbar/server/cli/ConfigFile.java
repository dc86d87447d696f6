package dev.crossbar.server.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration file ({@code --config FILE}): a YAML mapping whose keys are the long option
 * names without their dashes ({@code listen: 0.0.0.0:8080}, {@code route: [...]}), read with the
 * line of each key so that an error names the file, the line and the key. Values are scalars, or
 * lists of scalars for options that take several; what they mean is left to the options.
 */
final class ConfigFile {

    /** One key's values (one for a scalar) and the line it is on. */
    record Entry(String key, List<String> values, boolean list, int line) {
    }

    /** Made on first use: a relay started without a file loads no YAML reader at all. */
    private static final class Yaml {
        static final ObjectMapper MAPPER = new ObjectMapper(new YAMLFactory());
    }

    private final Path path;
    private final Map<String, Entry> entries;

    private ConfigFile(Path path, Map<String, Entry> entries) {
        this.path = path;
        this.entries = Collections.unmodifiableMap(entries);
    }

    /** An empty configuration: no file given. */
    static ConfigFile none() {
        return new ConfigFile(null, Map.of());
    }

    /**
     * Reads {@code path}.
     *
     * @throws ConfigException naming the file (and line) when it cannot be read or is not a mapping
     *         of scalars and lists
     */
    static ConfigFile read(Path path) {
        String text;
        try {
            text = Files.readString(path);
        } catch (NoSuchFileException e) {
            throw new ConfigException(path + ": no such file");
        } catch (IOException e) {
            throw new ConfigException(path + ": cannot read (" + e.getMessage() + ")");
        }
        Map<String, Entry> entries = new LinkedHashMap<>();
        try (JsonParser p = Yaml.MAPPER.getFactory().createParser(text)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                return new ConfigFile(path, entries); // an empty file sets nothing
            }
            if (first != JsonToken.START_OBJECT) {
                throw new ConfigException(path + ":" + p.currentLocation().getLineNr()
                        + ": expected a mapping of option names to values (e.g. listen: 0.0.0.0:8080)");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                int line = p.currentLocation().getLineNr();
                p.nextToken();
                JsonNode value = Yaml.MAPPER.readTree(p);
                if (entries.containsKey(key)) {
                    throw new ConfigException(path + ":" + line + ": " + key + ": given twice (first on line "
                            + entries.get(key).line() + ")");
                }
                entries.put(key, entry(path, key, line, value));
            }
        } catch (IOException e) {
            throw new ConfigException(path + ": not valid YAML: " + e.getMessage().lines().findFirst().orElse(""));
        }
        return new ConfigFile(path, entries);
    }

    private static Entry entry(Path path, String key, int line, JsonNode value) {
        if (value == null || value.isNull()) {
            throw new ConfigException(path + ":" + line + ": " + key + ": no value (remove the key for the default)");
        }
        if (value.isValueNode()) {
            return new Entry(key, List.of(value.asText()), false, line);
        }
        if (value.isArray()) {
            List<String> values = new ArrayList<>();
            for (JsonNode v : value) {
                if (!v.isValueNode() || v.isNull()) {
                    throw new ConfigException(path + ":" + line + ": " + key + ": a list of plain values expected");
                }
                values.add(v.asText());
            }
            return new Entry(key, List.copyOf(values), true, line);
        }
        throw new ConfigException(path + ":" + line + ": " + key + ": a value or a list of values expected, not a mapping");
    }

    /** The file read, or null for {@link #none()}. */
    Path path() {
        return path;
    }

    /** Keys in file order. */
    Map<String, Entry> entries() {
        return entries;
    }

    /** Where {@code entry} is, as errors and {@code --print-config} name it: {@code FILE:LINE}. */
    String where(Entry entry) {
        return path + ":" + entry.line();
    }
}
