package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * A refusal with the HTTP status it maps to and a reason fit to show the client: 401 when the
 * token is missing or not valid here, 403 when it is valid but does not allow this. The reason
 * never contains the token. No stack trace: refusals are expected, and may come in floods.
 */
public final class AccessDenied extends Exception {

    private static final long serialVersionUID = 1L;

    /** 401: no token, or a token this relay does not accept (signature, algorithm, audience, time, revoked). */
    public static final HttpResponseStatus UNAUTHENTICATED = HttpResponseStatus.UNAUTHORIZED;
    /** 403: a valid token that does not grant this route or this use of it. */
    public static final HttpResponseStatus FORBIDDEN = HttpResponseStatus.FORBIDDEN;

    private final transient HttpResponseStatus status;

    private AccessDenied(HttpResponseStatus status, String reason) {
        super(requireNonNull(reason, "reason"), null, false, false);
        this.status = status;
    }

    static AccessDenied unauthenticated(String reason) {
        return new AccessDenied(UNAUTHENTICATED, reason);
    }

    static AccessDenied forbidden(String reason) {
        return new AccessDenied(FORBIDDEN, reason);
    }

    public HttpResponseStatus status() {
        return status;
    }

    /** The reason, as sent to the client. */
    public String reason() {
        return getMessage();
    }
}
