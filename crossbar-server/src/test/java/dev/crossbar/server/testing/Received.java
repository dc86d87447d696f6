package dev.crossbar.server.testing;

import java.nio.charset.StandardCharsets;

/** One whole message as a client received it: its type and exact bytes. */
public record Received(boolean text, byte[] data) {

    public String string() {
        return new String(data, StandardCharsets.UTF_8);
    }
}
