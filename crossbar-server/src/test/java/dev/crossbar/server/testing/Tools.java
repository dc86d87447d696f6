package dev.crossbar.server.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The programs the integration tests start (nats-server, ffmpeg, systemd-analyze, ...). A missing
 * one skips the test with the command that installs it when a developer runs the tests by hand,
 * and fails it under CI ({@code CI=true}, which {@code .ci/run} sets), so CI never skips silently.
 */
public final class Tools {

    private Tools() {
    }

    /** Whether the tests run under CI, where nothing may be skipped. */
    public static boolean underCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * The path of {@code program}, found on the PATH or in the usual system directories; otherwise
     * the test is skipped (by hand) or fails (under CI), saying to install Debian's {@code debianPackage}.
     */
    public static String require(String program, String debianPackage) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/usr/bin", "/usr/local/bin", "/sbin", "/bin"));
        for (String d : dirs) {
            Path p = Path.of(d.isEmpty() ? "." : d, program);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        String message = program + " is not installed: apt-get install " + debianPackage
                + " (./test.sh and .ci/run install it)";
        if (underCi()) {
            Assertions.fail(message + "; under CI a missing program fails the build");
        }
        Assumptions.abort(message);
        throw new IllegalStateException("unreachable");
    }
}
