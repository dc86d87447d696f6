package dev.crossbar.core.stats;

/**
 * Traffic counted over one or more connections, as read at one moment: messages and bytes in
 * (client to relay) and out (relay to client), messages dropped for slow receivers, and messages
 * refused because the sender's role may not send. Bytes are message payload bytes, without
 * WebSocket framing.
 */
public record Traffic(long messagesIn, long bytesIn, long messagesOut, long bytesOut, long dropped, long refused) {

    public static final Traffic ZERO = new Traffic(0, 0, 0, 0, 0, 0);

    /** The counters of one connection, read now. */
    public static Traffic of(ConnectionStats s) {
        return new Traffic(s.messagesIn(), s.bytesIn(), s.messagesOut(), s.bytesOut(), s.dropped(), s.refused());
    }

    public Traffic plus(Traffic o) {
        return new Traffic(messagesIn + o.messagesIn, bytesIn + o.bytesIn, messagesOut + o.messagesOut,
                bytesOut + o.bytesOut, dropped + o.dropped, refused + o.refused);
    }
}
