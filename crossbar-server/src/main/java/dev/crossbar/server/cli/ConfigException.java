package dev.crossbar.server.cli;

/**
 * The configuration cannot be used: one line, naming where the bad value came from (the flag, the
 * environment variable, or the file and line), fit for stderr and for a refused reload.
 */
final class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    ConfigException(String message) {
        super(message);
    }
}
