package dev.crossbar.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import dev.crossbar.server.config.LogFormat;
import dev.crossbar.server.config.ServerConfig;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.ILoggerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the relay's log: level and format, one event per line on standard error, Netty's own lines
 * at warn unless the level is debug or finer, repeats rate-limited ({@link RepeatLimiter}). Called
 * at start and again by each reload; the last call wins. Where SLF4J is not bound to Logback (a
 * relay embedded elsewhere) it leaves the host's logging alone.
 */
public final class Logs {

    private static final String APPENDER = "crossbar";
    private static final RepeatLimiter REPEATS = new RepeatLimiter();
    private static ScheduledExecutorService reporter;

    private Logs() {
    }

    /** Applies {@code format} and {@code level} to every logger from now on. */
    public static void configure(LogFormat format, String level) {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext context) {
            configure(context, format, level, true);
        }
    }

    /**
     * As above, on {@code context}; {@code limitRepeats}: with the filter that holds repeats back
     * (not while Logback is still configuring itself, before the relay's own settings).
     */
    static synchronized void configure(LoggerContext context, LogFormat format, String level, boolean limitRepeats) {
        Level l = Level.toLevel(ServerConfig.checkLogLevel(level));
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(context);
        appender.setName(APPENDER);
        appender.setTarget("System.err");
        appender.setEncoder(encoder(context, format));
        appender.start();
        root.detachAndStopAllAppenders();
        root.addAppender(appender);
        root.setLevel(l);
        context.getLogger("io.netty").setLevel(l.isGreaterOrEqual(Level.INFO) ? Level.WARN : l);
        if (!limitRepeats) {
            return;
        }
        if (!context.getTurboFilterList().contains(REPEATS)) {
            context.addTurboFilter(REPEATS);
        }
        if (reporter == null) {
            reporter = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "crossbar-log-repeats");
                t.setDaemon(true);
                return t;
            });
            long period = TimeUnit.NANOSECONDS.toMillis(RepeatLimiter.WINDOW_NANOS);
            reporter.scheduleAtFixedRate(REPEATS::report, period, period, TimeUnit.MILLISECONDS);
        }
    }

    private static Encoder<ILoggingEvent> encoder(LoggerContext context, LogFormat format) {
        if (format == LogFormat.JSON) {
            JsonLineEncoder json = new JsonLineEncoder();
            json.setContext(context);
            json.start();
            return json;
        }
        PatternLayoutEncoder text = new PatternLayoutEncoder();
        text.setContext(context);
        text.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0} - %msg%n");
        text.start();
        return text;
    }
}
