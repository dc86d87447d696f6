package dev.crossbar.server.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.slf4j.event.KeyValuePair;

/**
 * One log event as one line of JSON: {@code time} (ISO-8601, UTC), {@code level}, {@code logger}
 * (the class's simple name), {@code message}, then the event's key-value pairs as fields of their
 * own (SLF4J's {@code addKeyValue}: what an audit event carries), and {@code error} with the stack
 * trace if there is one. A line never contains a raw newline, so collectors split on lines.
 */
public final class JsonLineEncoder extends EncoderBase<ILoggingEvent> {

    private static final JsonFactory JSON = new JsonFactory();
    private static final byte[] NONE = new byte[0];

    @Override
    public byte[] headerBytes() {
        return NONE;
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("time", Instant.ofEpochMilli(event.getTimeStamp()).toString());
            g.writeStringField("level", event.getLevel().toString());
            String logger = event.getLoggerName();
            g.writeStringField("logger", logger.substring(logger.lastIndexOf('.') + 1));
            g.writeStringField("message", event.getFormattedMessage());
            if (event.getKeyValuePairs() != null) {
                for (KeyValuePair kv : event.getKeyValuePairs()) {
                    g.writeFieldName(kv.key);
                    if (kv.value instanceof Number n && !(n instanceof Double || n instanceof Float)) {
                        g.writeNumber(n.longValue());
                    } else if (kv.value instanceof Boolean b) {
                        g.writeBoolean(b);
                    } else if (kv.value == null) {
                        g.writeNull();
                    } else {
                        g.writeString(String.valueOf(kv.value));
                    }
                }
            }
            IThrowableProxy t = event.getThrowableProxy();
            if (t != null) {
                g.writeStringField("error", ThrowableProxyUtil.asString(t));
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.write('\n');
        return out.toByteArray();
    }

    @Override
    public byte[] footerBytes() {
        return NONE;
    }

    /** For tests: the bytes as text. */
    static String text(byte[] line) {
        return new String(line, StandardCharsets.UTF_8);
    }
}
