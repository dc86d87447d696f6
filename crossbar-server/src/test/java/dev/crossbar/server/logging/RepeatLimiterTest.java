package dev.crossbar.server.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;

/** A flood of one line costs the log {@link RepeatLimiter#PER_WINDOW} lines and one that counts the rest. */
class RepeatLimiterTest {

    @Test
    void repeatsPastTheWindowsShareAreHeldBackAndCounted() {
        LoggerContext context = new LoggerContext();
        RepeatLimiter limiter = new RepeatLimiter();
        limiter.setContext(context);
        limiter.start();
        context.addTurboFilter(limiter);
        ListAppender<ILoggingEvent> list = new ListAppender<>();
        list.setContext(context);
        list.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(list);
        root.setLevel(Level.INFO);

        Logger noisy = context.getLogger("dev.crossbar.server.session.RelaySession");
        for (int i = 0; i < 100; i++) {
            noisy.warn("{} delivery failed", "client-" + i);
        }
        noisy.warn("another line entirely");
        assertEquals(RepeatLimiter.PER_WINDOW + 1, list.list.size(), "five of the flood and the other line");

        // report() logs through SLF4J's own factory: read what it would say from the counts instead.
        Logger reporter = context.getLogger(RepeatLimiter.REPORTER);
        java.util.List<String> said = new java.util.ArrayList<>();
        ListAppender<ILoggingEvent> reports = new ListAppender<>();
        reports.setContext(context);
        reports.start();
        reporter.addAppender(reports);
        limiter.reportTo(reporter);
        for (ILoggingEvent e : reports.list) {
            said.add(e.getFormattedMessage());
        }
        assertEquals(1, said.size(), said.toString());
        assertTrue(said.get(0).contains("95 more like \"{} delivery failed\" from RelaySession"), said.get(0));

        limiter.reportTo(reporter);
        assertEquals(1, reports.list.size(), "nothing held back since: nothing more said");
    }
}
