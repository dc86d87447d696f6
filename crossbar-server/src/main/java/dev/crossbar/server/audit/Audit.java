package dev.crossbar.server.audit;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The audit trail: one event per line, each with its fields as SLF4J key-value pairs, on the
 * logger {@value #LOGGER}. {@code --audit-log FILE} writes them there as JSON lines, rotated by
 * Logback; {@code --audit-log -} puts them in the main log; without it the logger is off and an
 * event costs one level check. What is recorded: connects, refusals with their reason, token
 * expiries and revocations, closes with code and reason and the bytes each way, 1:1 sessions opened
 * and ended, administrator actions; each with the time, this node, the client's real address
 * (truncated as statistics truncate it, unless {@code --audit-full-addresses}), the token's
 * {@code sub} and {@code jti}, the topic and the role.
 *
 * <p>Static, as a logger is: the node's name and the address rule are set once at start (and by
 * a reload). Any thread.
 */
public final class Audit {

    /** The logger audit events go to; the logging set-up gives it its own appender. */
    public static final String LOGGER = "crossbar.audit";

    private static final Logger log = LoggerFactory.getLogger(LOGGER);
    private static volatile String node = "-";
    private static volatile boolean fullAddresses;

    private Audit() {
    }

    /** This node's name in every event, and whether addresses are written whole. */
    public static void configure(String nodeName, boolean full) {
        node = nodeName;
        fullAddresses = full;
    }

    /** Whether events are recorded at all: callers that would build something costly ask first. */
    public static boolean on() {
        return log.isInfoEnabled();
    }

    /** Starts an event of {@code type} (connect, refused, expired, revoked, close, session-opened, ...). */
    public static Event event(String type) {
        return new Event(type);
    }

    /** An address as the audit trail writes it: whole, or truncated to its network. */
    public static String address(InetSocketAddress a) {
        if (a == null) {
            return null;
        }
        String text = (a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString()) + ":" + a.getPort();
        return fullAddresses ? text : ClientAddresses.truncate(text);
    }

    /** One event's fields, in the order given; written by {@link #log()}. */
    public static final class Event {
        private final String type;
        private final Map<String, Object> fields = new LinkedHashMap<>();

        private Event(String type) {
            this.type = type;
        }

        public Event address(InetSocketAddress a) {
            return field("address", Audit.address(a));
        }

        public Event sub(String sub) {
            return field("sub", sub);
        }

        public Event jti(String jti) {
            return field("jti", jti);
        }

        public Event topic(String topic) {
            return field("topic", topic);
        }

        public Event role(String role) {
            return field("role", role);
        }

        public Event code(int code) {
            return field("code", code);
        }

        public Event reason(String reason) {
            return field("reason", reason);
        }

        public Event bytes(long in, long out) {
            field("bytesIn", in);
            return field("bytesOut", out);
        }

        /** Any other field; a null value is left out. */
        public Event field(String key, Object value) {
            if (value != null) {
                fields.put(key, value);
            }
            return this;
        }

        /** Writes the event, if the trail is on. */
        public void log() {
            if (!log.isInfoEnabled()) {
                return;
            }
            LoggingEventBuilder b = log.atInfo().addKeyValue("event", type).addKeyValue("node", node);
            StringBuilder text = new StringBuilder(type);
            for (Map.Entry<String, Object> f : fields.entrySet()) {
                b = b.addKeyValue(f.getKey(), f.getValue());
                text.append(' ').append(f.getKey()).append('=').append(f.getValue());
            }
            b.log(text.toString());
        }
    }
}
