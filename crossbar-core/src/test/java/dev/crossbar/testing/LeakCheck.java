package dev.crossbar.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reported a buffer leak during it. Registered for every test class
 * by JUnit's extension auto-detection (see {@code junit-platform.properties}).
 *
 * <p>A leak is only reported when the GC has found the buffer, which may be after its class
 * finished. Nothing is discarded: reports already pending when a class starts fail that class
 * (they came from an earlier one; the report's stack says where), and reports after the last
 * class fail the run in {@link LeakCheckSessionListener}.
 */
public final class LeakCheck implements BeforeAllCallback, AfterAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        assertTrue(LeakRecorder.isInstalled(), "LeakRecorder must be installed before buffers are used");
        LeakRecorder.collect();
        List<String> late = LeakRecorder.drain();
        if (!late.isEmpty()) {
            fail(late.size() + " buffer leak(s) reported before " + context.getDisplayName()
                    + " started, so from an earlier test class:\n" + String.join("\n\n", late));
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        LeakRecorder.collect();
        List<String> leaks = LeakRecorder.drain();
        if (!leaks.isEmpty()) {
            fail(leaks.size() + " buffer leak(s) in " + context.getDisplayName() + ":\n"
                    + String.join("\n\n", leaks));
        }
    }
}
