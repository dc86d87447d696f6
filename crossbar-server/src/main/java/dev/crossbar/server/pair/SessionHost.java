package dev.crossbar.server.pair;


/** Where a session was offered: a host on this node ({@link HostEnd}) or on another ({@link RemoteHost}). */
interface SessionHost {

    /**
     * Tells the host to open {@code session}; any thread.
     *
     * @param client what the host is told of the client ({@link SessionEnd#offeredClient})
     */
    void offer(Session session, java.util.Map<String, Object> client);

    /** The session ended: the host no longer answers for it. */
    void forget(Session session);
}
