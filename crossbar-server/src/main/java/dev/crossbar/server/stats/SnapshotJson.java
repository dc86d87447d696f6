package dev.crossbar.server.stats;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.crossbar.server.config.Json;
import java.io.UncheckedIOException;

/**
 * Serialises snapshots with Jackson. Strings are written as JSON strings, escaped by Jackson and
 * otherwise raw: a user agent of {@code <script>} arrives as that text, and it is the reader's job
 * (the {@code /stats} page does it) to show it as text.
 */
final class SnapshotJson {

    /**
     * Made when the first reader needs one: Jackson's databind is a few hundred classes, about 1.5
     * MiB of memory, that a relay nobody watches need not hold.
     */
    private static final class Writer {
        static final ObjectWriter INSTANCE = Json.MAPPER.writer();
    }

    /** UTF-8 JSON of a snapshot, or of one of its parts. */
    byte[] write(Object value) {
        try {
            return Writer.INSTANCE.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            // Our own records with strings and numbers: this cannot fail short of a bug.
            throw new UncheckedIOException(e);
        }
    }
}
