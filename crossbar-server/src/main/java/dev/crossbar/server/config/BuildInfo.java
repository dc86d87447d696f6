package dev.crossbar.server.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The relay's version, as Maven wrote it into {@code version.properties} when it was built. */
public final class BuildInfo {

    /** What a build without that file (classes compiled by an IDE alone) reports. */
    public static final String UNKNOWN = "unknown";
    private static final String RESOURCE = "/dev/crossbar/server/version.properties";
    private static final String VERSION = read();

    private BuildInfo() {
    }

    /** The version: {@code 0.1.0} for a release, {@code 0.2.0-SNAPSHOT} between releases. */
    public static String version() {
        return VERSION;
    }

    private static String read() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
        return p.getProperty("version", UNKNOWN);
    }
}
