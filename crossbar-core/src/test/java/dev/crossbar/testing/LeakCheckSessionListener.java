package dev.crossbar.testing;

import java.util.List;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Installs {@link LeakRecorder} when the JUnit launcher starts, before any test touches a buffer,
 * and fails the run if leaks are reported after the last test class ({@link LeakCheck} covers the
 * classes themselves).
 */
public final class LeakCheckSessionListener implements LauncherSessionListener {

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        LeakRecorder.install();
    }

    /**
     * Throws when leaks are still pending: Surefire then reports the fork as failed and the build
     * fails (checked by {@code LeakGateCanaryTest} in each module).
     */
    @Override
    public void launcherSessionClosed(LauncherSession session) {
        LeakRecorder.collect();
        List<String> leaks = LeakRecorder.drain();
        if (!leaks.isEmpty()) {
            String report = leaks.size() + " buffer leak(s) reported after the last test class:\n"
                    + String.join("\n\n", leaks);
            // Also on stderr: whoever runs the launcher may print a session-close failure tersely.
            System.err.println(report);
            throw new AssertionError(report);
        }
    }
}
