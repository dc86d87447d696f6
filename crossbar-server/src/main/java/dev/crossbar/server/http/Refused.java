package dev.crossbar.server.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AttributeKey;

/** A decision, made before the request arrived, to refuse this connection's request with a status. */
public record Refused(HttpResponseStatus status, String reason) {

    public static final AttributeKey<Refused> KEY = AttributeKey.valueOf(Refused.class, "refused");
}
