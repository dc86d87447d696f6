package dev.crossbar.testing;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/** Installs {@link LeakRecorder} when the JUnit launcher starts, before any test touches a buffer. */
public final class LeakCheckSessionListener implements LauncherSessionListener {

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        LeakRecorder.install();
    }
}
