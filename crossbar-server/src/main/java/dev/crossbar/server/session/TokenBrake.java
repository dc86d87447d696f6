package dev.crossbar.server.session;

import dev.crossbar.core.route.SendLimits;

/**
 * A sender's limits as two token buckets, refilled from the time of each read: whole messages
 * ({@code rate} per second, holding {@code burst}) and payload bits ({@code bandwidth} per second,
 * holding one second's worth). A message passes only if both have room, and then takes from both.
 * The bit bucket may go into debt by one message: a message larger than a second's worth still
 * passes when the bucket is full, and the sender then waits it off, so the average holds without
 * refusing large messages outright.
 *
 * <p>Event loop of the connection only: no synchronisation.
 */
final class TokenBrake implements SendBrake {

    private final double messagesPerNano;
    private final double messageBucket;
    private final double bytesPerNano;
    private final double byteBucket;
    private double messages;
    private double bytes;
    private long atNanos;

    TokenBrake(SendLimits limits, long nowNanos) {
        double rate = limits.rate() == null ? 0 : limits.rate();
        long bandwidth = limits.bandwidth() == null ? 0 : limits.bandwidth();
        this.messagesPerNano = rate / 1e9;
        this.messageBucket = rate > 0 ? limits.messageBucket() : 0;
        this.bytesPerNano = bandwidth / 8.0 / 1e9;
        this.byteBucket = bandwidth / 8.0;
        this.messages = messageBucket;
        this.bytes = byteBucket;
        this.atNanos = nowNanos;
    }

    @Override
    public boolean admit(int size, long nowNanos) {
        long elapsed = nowNanos - atNanos;
        if (elapsed > 0) {
            atNanos = nowNanos;
            messages = Math.min(messageBucket, messages + elapsed * messagesPerNano);
            bytes = Math.min(byteBucket, bytes + elapsed * bytesPerNano);
        }
        boolean messageRoom = messagesPerNano == 0 || messages >= 1;
        boolean byteRoom = bytesPerNano == 0 || bytes > 0;
        if (!messageRoom || !byteRoom) {
            return false;
        }
        messages -= 1;
        bytes -= size;
        return true;
    }
}
