package dev.crossbar.server.cluster;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.pair.SessionCluster;
import dev.crossbar.server.pair.SessionRegistry;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.Subscription;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sessions across nodes: a client on a node without a host of its stream is offered, through NATS,
 * to a node that has one, which tells its host to open the session on the client's node (the offer
 * carries that node's {@code --session-url}); the session's bytes then flow on that node alone, with
 * its back-pressure, never through NATS. Only control messages cross: offers (a request to the
 * stream's subject, answered by one node of the queue group of nodes with hosts) and a host's
 * departure (to every node).
 *
 * <p>Its own NATS connection (same servers, credentials and TLS as the message link), for small and
 * rare messages, kept apart from the relay's message link.
 * Event loops never call the client: every call runs on the link's own thread, in order.
 */
public final class NatsSessionLink implements SessionCluster {

    private static final Logger log = LoggerFactory.getLogger(NatsSessionLink.class);

    static final String OFFER_PREFIX = "crossbar.session.offer.";
    static final String GONE = "crossbar.session.gone";
    static final String QUEUE = "crossbar-session-hosts";

    private final SessionRegistry registry;
    private final String url;
    private final Options options;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "crossbar-session-link");
        t.setDaemon(true);
        return t;
    });
    // Link thread only.
    private Connection connection;
    private Dispatcher dispatcher;
    private final Map<TopicKey, Subscription> offers = new HashMap<>();

    /**
     * @param url this node's address as hosts reach it ({@code ws://node-a:8080}); offers for clients
     *            here carry {@code url + /session/<id>}
     */
    public NatsSessionLink(NatsConfig config, String nodeName, String url, SessionRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
        this.url = requireNonNull(url, "url");
        Options.Builder b = NatsOptions.base(config, nodeName + "-sessions");
        this.options = b.build();
    }

    /** Connects in the background (retrying); work queued meanwhile runs once connected. */
    public void start() {
        thread.execute(this::connect);
    }

    private void connect() {
        long wait = 200;
        while (!thread.isShutdown()) {
            try {
                connection = Nats.connect(options);
                dispatcher = connection.createDispatcher();
                dispatcher.subscribe(GONE, this::onGone);
                log.debug("session link up; sessions for this node at {}", url);
                return;
            } catch (Exception e) {
                log.debug("session link: NATS not reachable ({}); retrying", e.toString());
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
                wait = Math.min(wait * 2, 5000);
            }
        }
    }

    @Override
    public String url() {
        return url;
    }

    @Override
    public void hosting(TopicKey stream) {
        run(() -> offers.computeIfAbsent(stream, k -> dispatcher.subscribe(offerSubject(k), QUEUE, this::onOffer)));
    }

    @Override
    public void notHosting(TopicKey stream) {
        run(() -> {
            Subscription s = offers.remove(stream);
            if (s != null) {
                dispatcher.unsubscribe(s);
            }
        });
    }

    @Override
    public CompletableFuture<String> offer(TopicKey stream, Map<String, Object> offer, Duration timeout) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        run(() -> connection.requestWithTimeout(offerSubject(stream), bytes(offer), timeout)
                .whenComplete((m, e) -> {
                    String host = e == null ? field(m.getData(), "host") : null;
                    if (host == null) {
                        answer.completeExceptionally(e != null ? e : new IllegalStateException("no host"));
                    } else {
                        answer.complete(host);
                    }
                }));
        return answer;
    }

    @Override
    public void gone(String hostId) {
        run(() -> connection.publish(GONE, bytes(Map.of("host", hostId))));
    }

    /** An offer for a client on another node: one local host takes it, or no answer. */
    private void onOffer(Message m) {
        try {
            if (m.getReplyTo() == null) {
                return;
            }
            String host = registry.takeRemoteOffer(Json.MAPPER.readTree(m.getData()));
            if (host != null) {
                connection.publish(m.getReplyTo(), bytes(Map.of("host", host)));
            }
        } catch (Exception e) {
            log.debug("session link: bad offer dropped: {}", e.toString());
        }
    }

    private void onGone(Message m) {
        String host = field(m.getData(), "host");
        if (host != null) {
            registry.remoteHostGone(host);
        }
    }

    private void run(Runnable r) {
        try {
            thread.execute(() -> {
                if (connection == null) {
                    return;
                }
                try {
                    r.run();
                } catch (RuntimeException e) {
                    log.debug("session link: {}", e.toString());
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    static String offerSubject(TopicKey stream) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(stream.toString().getBytes(StandardCharsets.UTF_8));
            return OFFER_PREFIX + HexFormat.of().formatHex(h, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    private static byte[] bytes(Map<String, ?> m) {
        try {
            return Json.MAPPER.writeValueAsBytes(m);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String field(byte[] data, String name) {
        try {
            JsonNode n = Json.MAPPER.readTree(data).get(name);
            return n == null || !n.isTextual() ? null : n.asText();
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public void close() {
        thread.execute(() -> {
            if (connection != null) {
                try {
                    connection.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        thread.shutdown();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
