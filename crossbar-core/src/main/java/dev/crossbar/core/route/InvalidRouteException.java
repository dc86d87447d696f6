package dev.crossbar.core.route;

/** A path that cannot be a route; the message says why, in words fit for an HTTP 400 body. */
public final class InvalidRouteException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public InvalidRouteException(String reason) {
        super(reason);
    }
}
