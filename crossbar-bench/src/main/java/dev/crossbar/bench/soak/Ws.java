package dev.crossbar.bench.soak;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One soak client's WebSocket (the JDK's), whole messages to a {@link Sink}, its end as a {@link Ending}.
 * Sends are one at a time and wait for the previous one (the JDK client's rule), so a relay that holds
 * a sender back holds it here. Pings are answered by the JDK client itself.
 */
final class Ws implements WebSocket.Listener, Client {

    /** How long a connect may take before it is given up. */
    static final Duration TIMEOUT = Duration.ofSeconds(20);
    /**
     * How long a send may wait before the connection is given up as broken: a lossless stream's
     * publisher is held while the link recovers, up to the relay's lossless timeout (60 s) and the
     * pings that notice a hung NATS server (30 s); a client giving up sooner would break the
     * transfer itself.
     */
    static final Duration SEND_TIMEOUT = Duration.ofSeconds(120);

    /** What a client does with each whole message it receives. */
    interface Sink {
        void message(byte[] payload, boolean text);
    }

    /**
     * How a connection ended: a close frame's code and reason, or -1 and the error. The JDK client
     * reports a connection that ended without a close frame as 1006, a code no close frame carries.
     */
    record Ending(int code, String reason) {
        boolean closeFrame() {
            return code >= 0 && code != 1006;
        }

        @Override
        public String toString() {
            return !closeFrame() ? "broken (" + (code < 0 ? reason : code + " without a close frame") + ")"
                    : code + " \"" + reason + "\"";
        }
    }

    final CompletableFuture<Ending> ended = new CompletableFuture<>();
    private final Sink sink;
    /** Messages read before the client stops reading (a stalled viewer), or unbounded. */
    private long reads;
    private final ByteArrayOutputStream parts = new ByteArrayOutputStream();
    private final StringBuilder textParts = new StringBuilder();
    private WebSocket ws;

    private Ws(Sink sink, long reads) {
        this.sink = sink;
        this.reads = reads;
    }

    /** Connects to {@code uri}, reading every message. */
    static Ws connect(HttpClient http, URI uri, Sink sink) throws Exception {
        return connect(http, uri, sink, Long.MAX_VALUE);
    }

    /** Connects to {@code uri} and reads {@code reads} messages, then no more (the socket fills). */
    static Ws connect(HttpClient http, URI uri, Sink sink, long reads) throws Exception {
        Ws w = new Ws(sink, reads);
        w.ws = http.newWebSocketBuilder().connectTimeout(TIMEOUT).header("User-Agent", "crossbar-soak")
                .buildAsync(uri, w).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return w;
    }

    synchronized void sendBinary(byte[] payload) throws Exception {
        await(ws.sendBinary(ByteBuffer.wrap(payload), true));
    }

    synchronized void sendText(String text) throws Exception {
        await(ws.sendText(text, true));
    }

    private void await(CompletableFuture<WebSocket> sent) throws Exception {
        try {
            sent.get(SEND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            abort();
            throw e;
        }
    }

    @Override
    public CompletableFuture<Ending> ended() {
        return ended;
    }

    @Override
    public void abort() {
        ws.abort();
        ended.complete(new Ending(-1, "aborted by the client"));
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        webSocket.request(1);
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        byte[] b = new byte[data.remaining()];
        data.get(b);
        if (last && parts.size() == 0) {
            deliver(webSocket, b, false);
        } else {
            parts.writeBytes(b);
            if (last) {
                byte[] whole = parts.toByteArray();
                parts.reset();
                deliver(webSocket, whole, false);
            } else {
                webSocket.request(1);
            }
        }
        return null;
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        textParts.append(data);
        if (last) {
            String whole = textParts.toString();
            textParts.setLength(0);
            deliver(webSocket, whole.getBytes(java.nio.charset.StandardCharsets.UTF_8), true);
        } else {
            webSocket.request(1);
        }
        return null;
    }

    private void deliver(WebSocket webSocket, byte[] payload, boolean text) {
        sink.message(payload, text);
        if (--reads > 0) {
            webSocket.request(1);
        }
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        ended.complete(new Ending(statusCode, reason));
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        ended.complete(new Ending(-1, String.valueOf(error)));
    }
}
