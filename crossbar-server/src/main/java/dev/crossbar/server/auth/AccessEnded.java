package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

/**
 * A pipeline event asking a connection's {@link AccessEnforcer} to end its access at once, with
 * {@code reason} in the 1008 close frame. Fired by the revocation endpoint, from any thread.
 */
record AccessEnded(String reason, boolean revoked) {

    AccessEnded {
        requireNonNull(reason, "reason");
    }
}
