package dev.crossbar.server.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.core.spi.ContextAwareBase;
import dev.crossbar.server.config.ServerConfig;

/**
 * The log before the command line has set its level and format, and for a relay started from code:
 * text on standard error at {@code info}, Netty's own lines at warn. Set in code rather than by a
 * {@code logback.xml}: reading XML loaded some 600 classes (Logback's configuration model and an XML
 * parser) into every relay, about 3 MiB of memory for nothing. A {@code logback-test.xml} on the
 * classpath (the tests') is left to Logback's own configurator.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class DefaultLogs extends ContextAwareBase implements Configurator {

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (DefaultLogs.class.getResource("/logback-test.xml") != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        Logs.configure(context, ServerConfig.DEFAULT_LOG_FORMAT, ServerConfig.DEFAULT_LOG_LEVEL, false);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
