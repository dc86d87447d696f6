package dev.crossbar.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Carries one TCP connection over one WebSocket, as websocat does: bytes read from the socket go as
 * binary messages; messages received are written to the socket (the next is asked for once written,
 * so a slow socket slows the WebSocket). Either side ending ends the other.
 */
public final class TcpBridge implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Socket socket;
    private final WebSocket ws;

    private TcpBridge(Socket socket, URI uri) {
        this.socket = socket;
        this.ws = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                .buildAsync(uri, new ToSocket()).orTimeout(10, TimeUnit.SECONDS).join();
        Thread pump = new Thread(this::toWebSocket, "tcp-bridge");
        pump.setDaemon(true);
        pump.start();
    }

    /** Bridges {@code socket} to a new WebSocket at {@code uri}. */
    public static TcpBridge open(Socket socket, URI uri) {
        return new TcpBridge(socket, uri);
    }

    private void toWebSocket() {
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = socket.getInputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                ws.sendBinary(ByteBuffer.wrap(Arrays.copyOf(buf, n)), true).get(30, TimeUnit.SECONDS);
            }
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "eof").get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            ws.abort();
        }
    }

    @Override
    public void close() {
        ws.abort();
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    private final class ToSocket implements WebSocket.Listener {
        @Override
        public CompletionStage<?> onBinary(WebSocket w, ByteBuffer data, boolean last) {
            try {
                OutputStream out = socket.getOutputStream();
                byte[] b = new byte[data.remaining()];
                data.get(b);
                out.write(b);
                out.flush();
                w.request(1);
            } catch (IOException e) {
                close();
            }
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket w, int statusCode, String reason) {
            try {
                socket.shutdownOutput();
            } catch (IOException e) {
                close();
            }
            return null;
        }

        @Override
        public void onError(WebSocket w, Throwable error) {
            close();
        }
    }
}
