package dev.crossbar.server.testing;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A WebSocket client built on the JDK's own {@code java.net.http.WebSocket}: an implementation
 * independent of Netty, so relay bugs cannot hide behind a shared codec.
 *
 * <p>Not for a client that receives a lot the moment it joins (a replay on a {@code start=keyframe}
 * stream): the JDK's client (17.0.15 and 25 alike) garbles what follows its first read buffer
 * ({@code jdk.httpclient.bufsize}, 16 KiB) when that read also held the end of the handshake's
 * response. The message that crosses byte 16,384 of the connection is delivered with the start of
 * a later frame in place of its own end, and the bytes between are lost, while the relay's bytes
 * on the wire are right (recorded by a proxy in between; docs/protocol.md, {@code start=keyframe}).
 * Such tests read with {@link NettyClient} or {@link RawClient}.
 */
public final class JdkClient implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public final WebSocket ws;
    private final Inbox inbox = new Inbox(() -> this.closeCode.isDone()
            ? "; connection closed: " + this.closeCode.join()[0] + " " + this.closeReason.join() : "");
    public final CompletableFuture<int[]> closeCode = new CompletableFuture<>();
    public final CompletableFuture<String> closeReason = new CompletableFuture<>();

    private JdkClient(URI uri, String userAgent, String... subprotocols) {
        this(uri, userAgent == null ? java.util.Map.of() : java.util.Map.of("User-Agent", userAgent), subprotocols);
    }

    private JdkClient(URI uri, java.util.Map<String, String> headers, String... subprotocols) {
        Listener listener = new Listener();
        WebSocket.Builder b = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
        headers.forEach(b::header);
        if (subprotocols.length > 0) {
            b.subprotocols(subprotocols[0], java.util.Arrays.copyOfRange(subprotocols, 1, subprotocols.length));
        }
        this.ws = b.buildAsync(uri, listener).orTimeout(10, TimeUnit.SECONDS).join();
    }

    /** Connects through {@code http} (e.g. one trusting a test certificate) with extra request headers. */
    private JdkClient(HttpClient http, URI uri, java.util.Map<String, String> headers) {
        Listener listener = new Listener();
        WebSocket.Builder b = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
        headers.forEach(b::header);
        this.ws = b.buildAsync(uri, listener).orTimeout(10, TimeUnit.SECONDS).join();
    }

    public static JdkClient connect(HttpClient http, URI uri, java.util.Map<String, String> headers) {
        return new JdkClient(http, uri, headers);
    }

    /** Connects with {@code Authorization: Bearer token}. */
    public static JdkClient connectWithToken(URI uri, String token) {
        return new JdkClient(HTTP, uri, java.util.Map.of("Authorization", "Bearer " + token));
    }

    public static JdkClient connect(URI uri, String... subprotocols) {
        return new JdkClient(uri, (String) null, subprotocols);
    }

    public static JdkClient connectAs(URI uri, String userAgent) {
        return new JdkClient(uri, userAgent);
    }

    /** Connects with extra request headers (e.g. {@code X-Forwarded-For}). */
    public static JdkClient connectWithHeaders(URI uri, java.util.Map<String, String> headers) {
        return new JdkClient(uri, headers);
    }

    public void sendText(String s) {
        ws.sendText(s, true).orTimeout(10, TimeUnit.SECONDS).join();
    }

    public void sendBinary(byte[] b) {
        ws.sendBinary(ByteBuffer.wrap(b), true).orTimeout(10, TimeUnit.SECONDS).join();
    }

    /** The next whole message, or an AssertionError after {@code timeout}. */
    public Received take(Duration timeout) {
        return inbox.take(timeout);
    }

    public Received take() {
        return take(Duration.ofSeconds(10));
    }

    /** The next message if one arrives within {@code timeout}, else null. */
    public Received poll(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout);
    }

    public int pending() {
        return inbox.size();
    }

    /** Close code sent by the relay, waiting up to {@code timeout}. */
    public int awaitClose(Duration timeout) {
        return closeCode.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).join()[0];
    }

    @Override
    public void close() {
        if (!ws.isOutputClosed()) {
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").orTimeout(5, TimeUnit.SECONDS).exceptionally(t -> null).join();
        }
        ws.abort();
    }

    private final class Listener implements WebSocket.Listener {
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
        private final StringBuilder partialText = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partialText.append(data);
            if (last) {
                inbox.add(new Received(true, partialText.toString().getBytes(StandardCharsets.UTF_8)));
                partialText.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            byte[] chunk = new byte[data.remaining()];
            data.get(chunk);
            partial.writeBytes(chunk);
            if (last) {
                inbox.add(new Received(false, partial.toByteArray()));
                partial.reset();
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closeCode.complete(new int[] {statusCode});
            closeReason.complete(reason);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closeCode.complete(new int[] {-1});
            closeReason.complete(String.valueOf(error));
        }
    }
}
