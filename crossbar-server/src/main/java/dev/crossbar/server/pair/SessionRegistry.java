package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.TopicKey;
import dev.crossbar.server.config.SessionConfig;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The relay's hosts per session stream and its sessions waiting for their host. One per server; any
 * thread. A session path is in {@link #waiting} from the offer until the host's upgrade claims it
 * (or the offer expires), so a path works once and only while it waits.
 */
public final class SessionRegistry {

    /** Changed by a configuration reload; sessions already offered keep their timeout. */
    private volatile SessionConfig config;
    private final ConcurrentHashMap<TopicKey, List<HostEnd>> hosts = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Session> waiting = new ConcurrentHashMap<>();
    /** Sessions open now (paired) whose client is on this node, for statistics. */
    private final java.util.Set<Session> opened = ConcurrentHashMap.newKeySet();
    private final AtomicInteger turn = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger hostCount = new AtomicInteger();
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong expired = new AtomicLong();
    /** Sessions of this node's clients offered to hosts on other nodes, by host id. */
    private final ConcurrentHashMap<String, java.util.Set<Session>> remote = new ConcurrentHashMap<>();
    /** The cluster's session link, or null on a node on its own. */
    private volatile SessionCluster link;

    public SessionRegistry(SessionConfig config) {
        this.config = requireNonNull(config, "config");
    }

    /** New limits for sessions offered from now on (a reload). */
    public void reconfigure(SessionConfig next) {
        this.config = requireNonNull(next, "next");
    }

    public SessionConfig config() {
        return config;
    }

    /** Joins the cluster: clients here may be served by hosts on other nodes, and hosts here by theirs. */
    public void link(SessionCluster l) {
        this.link = l;
    }

    void addHost(HostEnd host) {
        boolean[] first = new boolean[1];
        hosts.compute(host.stream(), (k, list) -> {
            List<HostEnd> l = list == null ? new CopyOnWriteArrayList<>() : list;
            first[0] = l.isEmpty();
            l.add(host);
            return l;
        });
        hostCount.incrementAndGet();
        SessionCluster l = link;
        if (first[0] && l != null) {
            l.hosting(host.stream());
        }
    }

    void removeHost(HostEnd host) {
        boolean[] last = new boolean[1];
        hosts.computeIfPresent(host.stream(), (k, list) -> {
            if (list.remove(host)) {
                hostCount.decrementAndGet();
            }
            last[0] = list.isEmpty();
            return list.isEmpty() ? null : list;
        });
        SessionCluster l = link;
        if (last[0] && l != null) {
            l.notHosting(host.stream());
        }
    }

    /** A host of {@code stream} on this node that takes offers now (in turn), or null. */
    HostEnd localHost(TopicKey stream) {
        List<HostEnd> list = hosts.get(stream);
        if (list == null || list.isEmpty()) {
            return null;
        }
        int n = list.size();
        int first = Math.floorMod(turn.getAndIncrement(), n);
        for (int i = 0; i < n; i++) {
            HostEnd h = list.get((first + i) % n);
            if (h.accepting()) {
                return h;
            }
        }
        return null;
    }

    /** The 1:N stream named {@code key} (as a topic key's name), for offers from other nodes. */
    TopicKey streamKey(String key) {
        return new TopicKey(dev.crossbar.core.schema.OneToMany.INSTANCE, key);
    }

    void remoteOffered(String hostId, Session s) {
        remote.computeIfAbsent(hostId, k -> ConcurrentHashMap.newKeySet()).add(s);
        if (s.state() == Session.State.ENDED) {
            remoteForget(hostId, s);
        }
    }

    void remoteForget(String hostId, Session s) {
        remote.computeIfPresent(hostId, (k, set) -> {
            set.remove(s);
            return set.isEmpty() ? null : set;
        });
    }

    /**
     * An offer from another node for a client there: a local host of its stream takes it (in turn).
     *
     * @return the id of the host that took it, or null if none here does
     */
    public String takeRemoteOffer(com.fasterxml.jackson.databind.JsonNode offer) {
        HostEnd host = localHost(streamKey(offer.path("key").asText()));
        if (host == null) {
            return null;
        }
        host.offerRemote(offer);
        return host.id();
    }

    /** A host on another node went away: its sessions with clients here end. */
    public void remoteHostGone(String hostId) {
        java.util.Set<Session> sessions = remote.remove(hostId);
        if (sessions != null) {
            for (Session s : sessions) {
                s.end(null, dev.crossbar.server.websocket.CloseCodes.GOING_AWAY, "host went away");
            }
        }
    }

    /** A host here that served clients of other nodes went away: they are told. */
    void announceGone(HostEnd host) {
        SessionCluster l = link;
        if (l != null) {
            l.gone(host.id());
        }
    }

    /**
     * Offers {@code client} a session on {@code stream}: picks a host (in turn) and registers the
     * session as waiting.
     *
     * @throws SessionRefused when no host is connected or too many sessions wait
     */
    Session offer(TopicKey stream, SessionEnd client) throws SessionRefused {
        SessionHost host = localHost(stream);
        SessionCluster l = link;
        if (host == null && l != null) {
            host = new RemoteHost(this, l);
        }
        if (host == null) {
            throw new SessionRefused("no host on " + name(stream) + "; try again later");
        }
        if (waiting.size() >= config.maxPending()) {
            throw new SessionRefused("too many sessions waiting for their host (" + config.maxPending()
                    + "); try again later");
        }
        Session s;
        do {
            s = new Session(SessionPaths.newId(), stream, client, host, this);
        } while (waiting.putIfAbsent(s.id(), s) != null);
        started.incrementAndGet();
        return s;
    }

    /** The waiting session at {@code id}, now claimed: the path is spent. Null if none waits there. */
    Session claim(String id) {
        Session s = waiting.remove(id);
        return s != null && s.claim() ? s : null;
    }

    void paired(Session s) {
        open.incrementAndGet();
        opened.add(s);
        if (s.state() == Session.State.ENDED) {
            // Ended between its pairing and now: the end may have looked for it before it was added.
            opened.remove(s);
        }
    }

    void ended(Session s, Session.State was) {
        waiting.remove(s.id(), s);
        if (was == Session.State.PAIRED) {
            open.decrementAndGet();
            opened.remove(s);
        } else {
            expired.incrementAndGet();
        }
    }

    /** The stream's name as rules and people write it. */
    static String name(TopicKey stream) {
        return stream.name().startsWith("/") ? stream.name() : "/" + stream.name();
    }

    /** Hosts connected now, by stream. */
    java.util.Map<TopicKey, Integer> hostsByStream() {
        java.util.Map<TopicKey, Integer> out = new java.util.HashMap<>();
        hosts.forEach((k, list) -> out.put(k, list.size()));
        return out;
    }

    /** Sessions waiting for their host now. */
    java.util.Collection<Session> waitingSessions() {
        return waiting.values();
    }

    /** Sessions open now whose client is on this node. */
    java.util.Collection<Session> openSessions() {
        return opened;
    }

    /** Hosts connected now. */
    public int hosts() {
        return hostCount.get();
    }

    /** Sessions offered and not yet opened by their host. */
    public int waiting() {
        return waiting.size();
    }

    /** Sessions open now (paired). */
    public int open() {
        return open.get();
    }

    /** Sessions offered since start. */
    public long started() {
        return started.get();
    }

    /** Sessions that ended before their host opened them (timeout, host or client gone). */
    public long unopened() {
        return expired.get();
    }

    /** Why a client gets no session: the reason its close frame carries. */
    static final class SessionRefused extends Exception {
        private static final long serialVersionUID = 1L;

        SessionRefused(String reason) {
            super(reason, null, false, false);
        }
    }
}
