package dev.crossbar.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A session host as an agent would be one: waits on {@code /in/<t>} (the JDK's WebSocket), and for
 * each offer opens the session path (on {@code sessionBase}) and echoes every frame back as it came
 * (fragment for fragment, so boundaries and types stay). The echo is Netty's WebSocket client
 * ({@link NettyEcho}), which stops reading while its echoes cannot be written, as a real bridge to a
 * TCP socket would. With {@code open} false it takes offers and opens nothing.
 */
public final class SessionHost implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One opened session: its socket and how it was closed (code, reason). */
    public static final class Opened {
        public final String path;
        public volatile NettyEcho ws;
        public final CompletableFuture<Object[]> closed = new CompletableFuture<>();

        Opened(String path) {
            this.path = path;
        }

        public int awaitCloseCode(Duration timeout) {
            return (Integer) closed.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).join()[0];
        }

        public String closeReason() {
            return (String) closed.join()[1];
        }
    }

    public final JdkClient control;
    private final URI sessionBase;
    private final boolean open;
    public final LinkedBlockingQueue<JsonNode> offers = new LinkedBlockingQueue<>();
    public final List<Opened> sessions = new CopyOnWriteArrayList<>();
    private final Thread reader;

    /**
     * @param control     the host's connection URI, {@code ws://relay/in/<t>}
     * @param sessionBase where session paths are opened, {@code ws://relay}
     */
    public SessionHost(URI control, URI sessionBase, boolean open, Map<String, String> headers) {
        this.control = JdkClient.connectWithHeaders(control, headers);
        this.sessionBase = sessionBase;
        this.open = open;
        this.reader = new Thread(this::readOffers, "session-host");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    public SessionHost(URI control, URI sessionBase) {
        this(control, sessionBase, true, Map.of());
    }

    private void readOffers() {
        try {
            while (true) {
                Received r = control.poll(Duration.ofSeconds(60));
                if (r == null) {
                    continue;
                }
                JsonNode offer = JSON.readTree(r.string());
                offers.add(offer);
                if (open) {
                    // An offer for a client on another node says where to open it.
                    openSession(offer.hasNonNull("url") ? URI.create(offer.get("url").asText())
                            : URI.create(sessionBase + offer.get("session").asText()));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // the control connection ended
        }
    }

    /** Opens the session at {@code uri} and echoes on it. */
    public Opened openSession(URI uri) {
        Opened o = new Opened(uri.getPath());
        sessions.add(o);
        o.ws = NettyEcho.open(uri, o.closed);
        return o;
    }

    public Opened awaitSession(int index, Duration timeout) {
        RelayServerExtension.await("session " + index + " opened", timeout,
                () -> sessions.size() > index && sessions.get(index).ws != null);
        return sessions.get(index);
    }

    public JsonNode takeOffer(Duration timeout) throws InterruptedException {
        JsonNode o = offers.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (o == null) {
            throw new AssertionError("no session offer within " + timeout);
        }
        return o;
    }

    @Override
    public void close() {
        reader.interrupt();
        control.close();
        for (Opened o : sessions) {
            if (o.ws != null) {
                o.ws.abort();
            }
        }
    }
}
