package dev.crossbar.server.cli;

import dev.crossbar.server.config.BuildInfo;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: the version Maven wrote into the jar at build time (see {@link BuildInfo}). */
final class VersionProvider implements IVersionProvider {

    @Override
    public String[] getVersion() {
        return new String[] {"crossbar " + BuildInfo.version()};
    }
}
