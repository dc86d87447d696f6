package dev.crossbar.server.pair;

import dev.crossbar.server.websocket.ClientInfo;

/** Where a session was offered: a host on this node ({@link HostEnd}) or on another ({@link RemoteHost}). */
interface SessionHost {

    /** Tells the host to open {@code session}; any thread. */
    void offer(Session session, ClientInfo client);

    /** The session ended: the host no longer answers for it. */
    void forget(Session session);
}
