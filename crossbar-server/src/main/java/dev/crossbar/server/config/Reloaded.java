package dev.crossbar.server.config;

/** What a configuration reload did: applied, or refused (the running configuration kept) and why. */
public record Reloaded(boolean applied, String detail) {
}
