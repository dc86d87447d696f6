package dev.crossbar.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One raw HTTP request on its own socket and the whole answer as text, so a test sees the exact
 * status line, headers and body the relay sent (the JDK's WebSocket client hides them on refusal).
 */
public final class HttpExchange {

    private HttpExchange() {
    }

    /** A WebSocket upgrade of {@code pathAndQuery} with {@code headers}; returns everything the relay sent. */
    public static String upgrade(int port, String pathAndQuery, Map<String, String> headers) throws IOException {
        StringBuilder req = new StringBuilder("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n");
        headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
        return exchange(port, req.append("\r\n").toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * As {@link #upgrade}, but returns only the response head (status line and headers) and then
     * closes: for an upgrade that succeeds (101), where the relay keeps the connection open.
     */
    public static String upgradeHead(int port, String pathAndQuery, Map<String, String> headers) throws IOException {
        StringBuilder req = new StringBuilder("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n");
        headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(req.append("\r\n").toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder head = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                head.append((char) c);
                if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) {
                    break;
                }
            }
            return head.toString();
        }
    }

    /**
     * Any request, written as given; returns the relay's answer: one whole response when it says its
     * length (the relay may keep the connection open), otherwise everything it sent until it closed.
     */
    public static String exchange(int port, byte[] request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            return readResponse(s.getInputStream());
        }
    }

    /**
     * Reads one response: the head, then {@code Content-Length} bytes of body; without a length,
     * everything until the peer closes. Returns "" if the peer closed before sending anything.
     */
    public static String readResponse(InputStream in) throws IOException {
        java.io.ByteArrayOutputStream head = new java.io.ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
        }
        String headText = head.toString(StandardCharsets.ISO_8859_1);
        int length = contentLength(headText);
        byte[] body = length < 0 ? in.readAllBytes() : in.readNBytes(length);
        return headText + new String(body, StandardCharsets.UTF_8);
    }

    /** The value of {@code Content-Length} in a response head, or -1. */
    static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                return Integer.parseInt(line.substring(colon + 1).trim());
            }
        }
        return -1;
    }

    /** The body after the blank line. */
    public static String body(String response) {
        int i = response.indexOf("\r\n\r\n");
        return i < 0 ? "" : response.substring(i + 4);
    }
}
