package dev.crossbar.server.cluster;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.admin.Disconnect;
import dev.crossbar.server.admin.DisconnectBroadcast;
import dev.crossbar.server.auth.Revocation;
import dev.crossbar.server.auth.RevocationStore;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.config.NatsConfig;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueManagement;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatchOption;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.StorageType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The administrator's actions across the cluster: revocations kept in a JetStream key-value bucket
 * ({@value #BUCKET}) that every node watches, so each one refuses a revoked token and closes its
 * live connections within moments, and a node started later, or again, reads them all; and
 * disconnects published to every node ({@value #DISCONNECT_SUBJECT}).
 *
 * <p>Expiry: each entry carries its own ({@code until}); the servers Debian ships (nats-server 2.9)
 * can only expire a whole bucket's entries by one age, not each entry by its own, so every node
 * purges, about once a minute, the entries whose time has passed (a purge conditional on the
 * entry's revision, so a revocation renewed meanwhile stays). One key per id ({@code jti.<id>},
 * {@code sid.<id>}, the id in base64url); a second revocation of the same id keeps the later
 * expiry (a conditional update).
 *
 * <p>Without JetStream on the NATS server (started without {@code -js}) the link says so at start,
 * once, at ERROR, and falls back: revocations are published to the nodes connected at that moment
 * ({@value #REVOKE_SUBJECT}), which close their connections and refuse the token, and each node
 * keeps them as it would alone ({@code fallback}: its file, or its memory); a node that was down
 * then never hears of them. A server that has JetStream but does not answer yet (its cluster has
 * not elected a leader) is asked again until it does, said once at WARN; meanwhile a revocation
 * holds on the node that took it, and its answer says it was not kept in the cluster.
 *
 * <p>Its own NATS connection (same servers, credentials and TLS as the message link) and its own
 * thread; {@link #save} blocks the admin thread that calls it, never an event loop.
 */
public final class NatsAdminLink implements RevocationStore, DisconnectBroadcast {

    private static final Logger log = LoggerFactory.getLogger(NatsAdminLink.class);

    /** The key-value bucket revocations live in. */
    public static final String BUCKET = "crossbar_revocations";
    /** Where revocations go when JetStream is not there. */
    static final String REVOKE_SUBJECT = "crossbar._admin.revoke";
    static final String DISCONNECT_SUBJECT = "crossbar._admin.disconnect";
    /** How often each node purges expired revocations (spread by up to a quarter, so nodes do not all at once). */
    static final Duration PURGE_INTERVAL = Duration.ofMinutes(1);
    /** How long {@link #save} waits for the link to be up. */
    static final Duration SAVE_TIMEOUT = Duration.ofSeconds(5);
    /** Replicas asked for the bucket in a NATS cluster; a single server gets one. */
    static final int REPLICAS = 3;

    private final Options options;
    private final RevocationStore fallback;
    /** Tokens are checked: revocations matter and are kept in the bucket; otherwise only disconnects travel. */
    private final boolean keepsRevocations;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "crossbar-admin-link");
        t.setDaemon(true);
        return t;
    });
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile Connection connection;
    private volatile KeyValue bucket;
    private volatile Consumer<Revocation> revocations = r -> { };
    private volatile Consumer<Disconnect> disconnects = d -> { };
    private volatile boolean closed;

    /**
     * @param fallback where this node keeps revocations if the NATS server has no JetStream
     * @param keepsRevocations whether tokens are checked: without, no bucket is opened (and no JetStream needed)
     */
    public NatsAdminLink(NatsConfig config, String nodeName, RevocationStore fallback, boolean keepsRevocations) {
        this.fallback = requireNonNull(fallback, "fallback");
        this.keepsRevocations = keepsRevocations;
        Options.Builder b = NatsOptions.base(config, nodeName + "-admin")
                .noEcho(); // this node has acted on its own disconnects and revocations already
        this.options = b.build();
    }

    // ---- RevocationStore ----

    /** Connects in the background (retrying); revocations found or heard go to {@code sink}. */
    @Override
    public void start(Consumer<Revocation> sink) {
        this.revocations = requireNonNull(sink, "sink");
        thread.execute(this::connect);
    }

    @Override
    public void listen(Consumer<Disconnect> local) {
        this.disconnects = requireNonNull(local, "local");
    }

    @Override
    public void save(Revocation r) throws IOException {
        try {
            if (!ready.await(SAVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("NATS or its JetStream did not answer within " + SAVE_TIMEOUT.toSeconds() + "s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        KeyValue kv = bucket;
        if (kv == null) {
            connection.publish(REVOKE_SUBJECT, json(r));
            fallback.save(r);
            return;
        }
        try {
            if (r.jti() != null) {
                merge(kv, "jti." + key(r.jti()), new Revocation(r.jti(), null, r.untilMillis()));
            }
            if (r.sid() != null) {
                merge(kv, "sid." + key(r.sid()), new Revocation(null, r.sid(), r.untilMillis()));
            }
        } catch (JetStreamApiException e) {
            throw new IOException("JetStream: " + e.getMessage(), e);
        }
    }

    /** Puts {@code r} at {@code key} unless the bucket holds a later expiry there; retried on a race. */
    private static void merge(KeyValue kv, String key, Revocation r) throws IOException, JetStreamApiException {
        for (int attempt = 0; ; attempt++) {
            KeyValueEntry e = kv.get(key);
            try {
                if (e == null || e.getOperation() != KeyValueOperation.PUT) {
                    if (e == null) {
                        kv.create(key, json(r));
                    } else {
                        kv.update(key, json(r), e.getRevision());
                    }
                    return;
                }
                Revocation held = parse(e.getValue());
                if (held != null && held.untilMillis() >= r.untilMillis()) {
                    return;
                }
                kv.update(key, json(r), e.getRevision());
                return;
            } catch (JetStreamApiException race) {
                if (attempt >= 4) {
                    throw race; // not a race after all
                }
            }
        }
    }

    @Override
    public String describe() {
        if (bucket != null) {
            return "JetStream bucket " + BUCKET;
        }
        return ready.getCount() == 0 ? "NATS (no JetStream: the nodes connected now) and " + fallback.describe()
                : "JetStream bucket " + BUCKET + " (once NATS answers)";
    }

    // ---- DisconnectBroadcast ----

    @Override
    public void publish(Disconnect d) {
        Connection c = connection;
        if (c == null) {
            log.warn("Disconnect of {} not sent to the other nodes: NATS not connected yet", d);
            return;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", d.topic());
        m.put("sub", d.sub());
        m.put("connection", d.connection());
        try {
            c.publish(DISCONNECT_SUBJECT, Json.MAPPER.writeValueAsBytes(m));
        } catch (IOException e) {
            throw new IllegalStateException("strings are JSON", e);
        }
    }

    // ---- the link's thread ----

    private void connect() {
        long wait = 200;
        while (!closed) {
            try {
                connection = Nats.connect(options);
                break;
            } catch (IOException e) {
                log.debug("admin link: NATS not reachable ({}); retrying", e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            wait = Math.min(wait * 2, 5000);
        }
        if (closed) {
            return;
        }
        Dispatcher dispatcher = connection.createDispatcher();
        dispatcher.subscribe(DISCONNECT_SUBJECT, this::onDisconnect);
        if (!keepsRevocations) {
            ready.countDown();
            return;
        }
        try {
            bucket = openBucketWhenJetStreamAnswers();
            if (bucket == null) {
                return; // closed meanwhile
            }
            bucket.watchAll(new Watcher(), KeyValueWatchOption.IGNORE_DELETE);
            long period = PURGE_INTERVAL.toMillis();
            thread.scheduleWithFixedDelay(this::purgeExpired, period + ThreadLocalRandom.current().nextLong(period / 4),
                    period, TimeUnit.MILLISECONDS);
            log.info("Revocations kept in the cluster: JetStream bucket {}", BUCKET);
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            bucket = null;
            log.error("Revocations are not kept in the cluster: JetStream is not enabled on the NATS server ({}). "
                    + "They reach the nodes connected at the time and are kept in {}; start nats-server with -js "
                    + "(JetStream) so that every node, restarted or new, refuses them", e.getMessage(), fallback.describe());
            fallback.start(revocations);
            dispatcher.subscribe(REVOKE_SUBJECT, this::onFallbackRevocation);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ready.countDown();
    }

    /**
     * The bucket, once JetStream answers. A server that has JetStream but no leader yet (a cluster
     * just started or restarted elects one in seconds) is asked again, with back-off, and said so
     * once; a server without JetStream throws at once (the fallback). Null if closed meanwhile.
     */
    private KeyValue openBucketWhenJetStreamAnswers() throws IOException, JetStreamApiException, InterruptedException {
        long wait = 200;
        boolean said = false;
        while (!closed) {
            try {
                return openBucket();
            } catch (IOException | JetStreamApiException | RuntimeException e) {
                if (!connection.getServerInfo().isJetStreamAvailable()) {
                    throw e;
                }
                if (!said) {
                    log.warn("JetStream does not answer yet ({}); revocations wait for it, asking again", e.getMessage());
                    said = true;
                }
            }
            Thread.sleep(wait);
            wait = Math.min(wait * 2, 5000);
        }
        return null;
    }

    /** The bucket, made if it is not there yet: one value per key, on disk, replicated where the cluster allows. */
    private KeyValue openBucket() throws IOException, JetStreamApiException {
        KeyValueManagement kvm = connection.keyValueManagement();
        try {
            kvm.getStatus(BUCKET);
        } catch (JetStreamApiException notThere) {
            if (notThere.getErrorCode() != 404) {
                throw notThere;
            }
            try {
                kvm.create(config(REPLICAS));
            } catch (JetStreamApiException fewerServers) {
                kvm.create(config(1)); // a single server, or a cluster smaller than three
            }
        }
        return connection.keyValue(BUCKET);
    }

    private static KeyValueConfiguration config(int replicas) {
        return KeyValueConfiguration.builder().name(BUCKET).maxHistoryPerKey(1).storageType(StorageType.File)
                .replicas(replicas).description("Crossbar token revocations; each value carries its own expiry").build();
    }

    /** Purges the revocations whose time has passed (each only if unchanged since read). */
    void purgeExpired() {
        KeyValue kv = bucket;
        if (kv == null) {
            return;
        }
        long now = System.currentTimeMillis();
        int purged = 0;
        try {
            for (String key : kv.keys()) {
                KeyValueEntry e = kv.get(key);
                Revocation r = e == null ? null : parse(e.getValue());
                if (e != null && (r == null || r.untilMillis() <= now)) {
                    try {
                        kv.purge(key, e.getRevision());
                        purged++;
                    } catch (JetStreamApiException renewed) {
                        // updated since we read it: a newer revocation, kept
                    }
                }
            }
            if (purged > 0) {
                kv.purgeDeletes();
                log.debug("purged {} expired revocation(s) from {}", purged, BUCKET);
            }
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.debug("purging expired revocations failed ({}); next time", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final class Watcher implements KeyValueWatcher {
        @Override
        public void watch(KeyValueEntry entry) {
            if (entry.getOperation() == KeyValueOperation.PUT) {
                Revocation r = parse(entry.getValue());
                if (r != null && r.untilMillis() > System.currentTimeMillis()) {
                    revocations.accept(r);
                }
            }
        }

        @Override
        public void endOfData() {
        }
    }

    private void onFallbackRevocation(Message m) {
        Revocation r = parse(m.getData());
        if (r != null) {
            revocations.accept(r);
            try {
                fallback.save(r);
            } catch (IOException e) {
                log.warn("Revocation from another node not kept in {}: {}", fallback.describe(), e.getMessage());
            }
        }
    }

    private void onDisconnect(Message m) {
        try {
            JsonNode n = Json.MAPPER.readTree(m.getData());
            disconnects.accept(new Disconnect(text(n, "topic"), text(n, "sub"), text(n, "connection")));
        } catch (IOException | IllegalArgumentException e) {
            log.debug("admin link: unreadable disconnect ignored ({})", e.toString());
        }
    }

    private static String text(JsonNode n, String name) {
        return n.path(name).isTextual() ? n.get(name).asText() : null;
    }

    static byte[] json(Revocation r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jti", r.jti());
        m.put("sid", r.sid());
        m.put("until", r.untilMillis());
        try {
            return Json.MAPPER.writeValueAsBytes(m);
        } catch (IOException e) {
            throw new IllegalStateException("strings and a number are JSON", e);
        }
    }

    static Revocation parse(byte[] data) {
        try {
            JsonNode n = Json.MAPPER.readTree(data);
            String jti = text(n, "jti");
            String sid = text(n, "sid");
            if ((jti == null && sid == null) || !n.path("until").canConvertToLong()) {
                return null;
            }
            return new Revocation(jti, sid, n.get("until").asLong());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** An id as a key token: base64url without padding, which a NATS subject token always allows. */
    static String key(String id) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(id.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        closed = true;
        thread.shutdownNow();
        Connection c = connection;
        if (c != null) {
            try {
                c.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        fallback.close();
    }
}
