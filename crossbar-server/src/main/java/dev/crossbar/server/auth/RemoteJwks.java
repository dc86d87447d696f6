package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import dev.crossbar.server.config.VerificationKeys;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --auth-jwks-url}: the identity provider's signing keys, fetched over HTTPS and cached. The
 * set is fetched at start (the relay does not start without it), again every refresh interval, and
 * soon after a token names a {@code kid} the set lacks (at most once per {@link #MIN_UNKNOWN_KID_WAIT},
 * so a flood of forged kids cannot make the relay hammer the provider); such a token is refused
 * meanwhile, and its client's retry finds the new key. While the provider is down or answers
 * nonsense the last good set stays in force, and the log (a warning when it starts failing, a line
 * when it recovers) and {@code /metrics} ({@value #REFRESHES}, {@value #AGE}) say so. Every key of
 * the set is in force at once, so a provider can publish its next key before it signs with it.
 *
 * <p>Verification reads the set from any event loop without blocking; fetches run on one daemon
 * thread of its own.
 */
public final class RemoteJwks implements JWKSource<SecurityContext>, MeterBinder, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RemoteJwks.class);

    /** Counter: key set fetches, tagged {@code result=ok|failed}. */
    public static final String REFRESHES = "crossbar.auth.jwks.refreshes";
    /** Gauge: seconds since the key set in force was fetched. */
    public static final String AGE = "crossbar.auth.jwks.age";
    /** Gauge: keys in force. */
    public static final String KEYS = "crossbar.auth.jwks.keys";
    /** Shortest time between two fetches caused by unknown {@code kid}s. */
    static final Duration MIN_UNKNOWN_KID_WAIT = Duration.ofSeconds(10);
    /** How long one fetch may take. */
    static final Duration FETCH_TIMEOUT = Duration.ofSeconds(10);
    /** Largest key set accepted: a provider's is a few kilobytes. */
    static final int MAX_BYTES = 1024 * 1024;

    private final URI url;
    private final Duration refresh;
    private final HttpClient http;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "crossbar-jwks");
        t.setDaemon(true);
        return t;
    });
    private final LongAdder ok = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final AtomicBoolean unknownKidFetchQueued = new AtomicBoolean();
    private volatile JWKSet keys = new JWKSet();
    private volatile long fetchedAtMillis;
    private volatile long lastUnknownKidFetchNanos = System.nanoTime() - MIN_UNKNOWN_KID_WAIT.toNanos();
    private boolean failing;

    /** @param ssl whom to trust for the provider's certificate: its CA, or the JVM's trusted CAs */
    public RemoteJwks(URI url, SSLContext ssl, Duration refresh) {
        this.url = requireNonNull(url, "url");
        this.refresh = requireNonNull(refresh, "refresh");
        this.http = HttpClient.newBuilder().sslContext(requireNonNull(ssl, "ssl")).connectTimeout(FETCH_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    /**
     * Fetches the set now, then every refresh interval.
     *
     * @throws IllegalArgumentException saying why the first fetch failed: the relay cannot check any token
     */
    public void start() {
        try {
            keys = fetch();
            fetchedAtMillis = System.currentTimeMillis();
            ok.increment();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--auth-jwks-url: cannot fetch the keys from " + url + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalArgumentException("--auth-jwks-url: interrupted fetching " + url, e);
        }
        log.info("JWKS: {} key(s) from {}, refreshed every {}s", keys.getKeys().size(), url, refresh.toSeconds());
        thread.scheduleWithFixedDelay(this::refresh, refresh.toMillis(), refresh.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public List<JWK> get(JWKSelector selector, SecurityContext context) {
        List<JWK> found = selector.select(keys);
        if (found.isEmpty()) {
            unknownKid();
        }
        return found;
    }

    /** A token named a key the set lacks: fetch again soon, unless that was done just now. */
    private void unknownKid() {
        long now = System.nanoTime();
        if (now - lastUnknownKidFetchNanos < MIN_UNKNOWN_KID_WAIT.toNanos()
                || !unknownKidFetchQueued.compareAndSet(false, true)) {
            return;
        }
        lastUnknownKidFetchNanos = now;
        thread.execute(() -> {
            unknownKidFetchQueued.set(false);
            refresh();
        });
    }

    /** Fetches the set; on failure keeps the one in force and says so. Fetch thread only. */
    void refresh() {
        try {
            JWKSet fresh = fetch();
            keys = fresh;
            fetchedAtMillis = System.currentTimeMillis();
            ok.increment();
            if (failing) {
                failing = false;
                log.info("JWKS: {} reachable again; {} key(s) in force", url, fresh.getKeys().size());
            }
        } catch (IOException | RuntimeException e) {
            failed.increment();
            if (!failing) {
                failing = true;
                log.warn("JWKS: refresh from {} failed ({}); keeping the {} key(s) fetched at {}", url, e.getMessage(),
                        keys.getKeys().size(), Instant.ofEpochMilli(fetchedAtMillis));
            } else {
                log.debug("JWKS: refresh from {} failed again ({})", url, e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private JWKSet fetch() throws IOException, InterruptedException {
        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(url).timeout(FETCH_TIMEOUT)
                .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            if (r.statusCode() != 200) {
                throw new IOException("HTTP " + r.statusCode());
            }
            byte[] body = in.readNBytes(MAX_BYTES + 1);
            if (body.length > MAX_BYTES) {
                throw new IOException("key set larger than " + MAX_BYTES + " bytes");
            }
            try {
                return VerificationKeys.jwks(JWKSet.parse(new String(body, StandardCharsets.UTF_8))).jwks();
            } catch (java.text.ParseException e) {
                throw new IOException("not a JWKS: " + e.getMessage(), e);
            }
        }
    }

    /** The keys in force now. */
    public JWKSet keys() {
        return keys;
    }

    public URI url() {
        return url;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        FunctionCounter.builder(REFRESHES, ok, LongAdder::sum).tag("result", "ok")
                .description("Fetches of the identity provider's key set that succeeded").register(registry);
        FunctionCounter.builder(REFRESHES, failed, LongAdder::sum).tag("result", "failed")
                .description("Fetches of the identity provider's key set that failed (the last good set kept)")
                .register(registry);
        Gauge.builder(AGE, this, j -> (System.currentTimeMillis() - j.fetchedAtMillis) / 1000.0).baseUnit("seconds")
                .description("Age of the key set in force").register(registry);
        Gauge.builder(KEYS, this, j -> j.keys.getKeys().size()).description("Keys in force").register(registry);
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
