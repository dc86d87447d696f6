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
 */
public final class LeakCheck implements BeforeAllCallback, AfterAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        assertTrue(LeakRecorder.isInstalled(), "LeakRecorder must be installed before buffers are used");
        LeakRecorder.collect();
        LeakRecorder.drain();
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
