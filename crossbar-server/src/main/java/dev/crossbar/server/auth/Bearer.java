package dev.crossbar.server.auth;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;

/**
 * Where a client puts its token in the upgrade request: an {@code Authorization: Bearer} header
 * (RFC 6750 section 2.1; non-browser clients), or else a {@code token} query parameter (section 2.3;
 * browsers cannot set headers on a WebSocket).
 */
final class Bearer {

    /** The query parameter that carries a token. */
    static final String QUERY_PARAMETER = "token";
    private static final String SCHEME = "Bearer ";

    private Bearer() {
    }

    /**
     * The token presented with {@code request}, or null if it presents none.
     *
     * @throws AccessDenied (401) for an Authorization header that is not a Bearer token
     */
    static String from(HttpRequest request) throws AccessDenied {
        String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (header != null) {
            if (header.length() <= SCHEME.length() || !header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
                throw AccessDenied.unauthenticated("Authorization header is not a Bearer token");
            }
            return header.substring(SCHEME.length()).strip();
        }
        if (request.uri().indexOf('?') < 0) {
            return null;
        }
        List<String> values;
        try {
            values = new QueryStringDecoder(request.uri()).parameters().get(QUERY_PARAMETER);
        } catch (IllegalArgumentException e) {
            throw AccessDenied.unauthenticated("malformed query string");
        }
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}
