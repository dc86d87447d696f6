package dev.crossbar.server.session;

/**
 * Whether a sender's next message is within its limits ({@code rate}, {@code burst},
 * {@code bandwidth}): one object per connection, picked when it joins, so a stream without limits
 * pays one call that answers yes ({@link #NONE}). Event loop of the connection only.
 */
interface SendBrake {

    /** No limit: every message passes. */
    SendBrake NONE = (bytes, nowNanos) -> true;
    /** Nothing passes: a connection being closed for going over its limit. */
    SendBrake STOPPED = (bytes, nowNanos) -> false;

    /** Takes a message of {@code bytes} payload bytes at {@code nowNanos}; false if it is over a limit. */
    boolean admit(int bytes, long nowNanos);
}
