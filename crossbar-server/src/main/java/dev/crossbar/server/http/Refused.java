package dev.crossbar.server.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AttributeKey;

/**
 * A decision, made before the request arrived, to refuse this connection's request: the status,
 * the reason counted in metrics, and the text the client reads.
 */
public record Refused(HttpResponseStatus status, HandshakeFailures.Reason reason, String text) {

    public static final AttributeKey<Refused> KEY = AttributeKey.valueOf(Refused.class, "refused");
}
