package dev.crossbar.server.testing;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import java.net.URI;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts a real relay on 127.0.0.1 and an ephemeral port before each test and stops it after.
 * Use with {@code @RegisterExtension}; {@code configure} adjusts the defaults for the test class.
 */
public final class RelayServerExtension implements BeforeEachCallback, AfterEachCallback {

    private final UnaryOperator<ServerConfig.Builder> configure;
    private CrossbarServer server;

    public RelayServerExtension(UnaryOperator<ServerConfig.Builder> configure) {
        this.configure = configure;
    }

    public RelayServerExtension() {
        this(b -> b);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        ServerConfig.Builder b = ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(2)
                .shutdownGrace(Duration.ofSeconds(2));
        server = CrossbarServer.start(configure.apply(b).build());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    public CrossbarServer server() {
        return server;
    }

    public int port() {
        return server.port();
    }

    public URI ws(String path) {
        return URI.create("ws://127.0.0.1:" + port() + path);
    }

    public URI http(String path) {
        return URI.create("http://127.0.0.1:" + port() + path);
    }

    /** Waits until {@code condition} holds, failing after {@code timeout}. */
    public static void await(String what, Duration timeout, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for: " + what);
            }
        }
    }
}
