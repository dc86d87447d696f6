package dev.crossbar.server.config;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The relay's one JSON mapper (Jackson's, thread-safe once configured), for the small documents
 * the relay reads and writes: admin requests and answers, audit and revocation lines, session
 * offers, cluster messages. Made when first used, so a relay nobody asks for JSON never loads
 * Jackson (a few megabytes of an idle relay's memory).
 */
public final class Json {

    public static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }
}
