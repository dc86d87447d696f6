package dev.crossbar.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * An HTTP ingest poster on a bare socket: a {@code POST} or {@code PUT} whose body is written in
 * pieces, as a camera writes its stream, either chunked or with a {@code Content-Length}; then the
 * relay's answer as text (status line, headers, body), so a test sees exactly what was sent.
 */
public final class IngestPoster implements AutoCloseable {

    public final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final boolean chunked;

    private IngestPoster(Socket socket, boolean chunked) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = socket.getInputStream();
        this.chunked = chunked;
    }

    /**
     * Connects and sends the request head.
     *
     * @param contentLength the body's length, or -1 for {@code Transfer-Encoding: chunked}
     * @param headers extra header lines (a token, a content type, an {@code Expect})
     */
    public static IngestPoster open(int port, String method, String pathAndQuery, long contentLength,
                                    Map<String, String> headers) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        s.setSoTimeout(10_000);
        IngestPoster poster = new IngestPoster(s, contentLength < 0);
        StringBuilder head = new StringBuilder(method + " " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        head.append(contentLength < 0 ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + contentLength + "\r\n");
        headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        poster.out.write(head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        poster.out.flush();
        return poster;
    }

    /** A {@code POST} of a chunked body with no extra headers. */
    public static IngestPoster post(int port, String pathAndQuery) throws IOException {
        return open(port, "POST", pathAndQuery, -1, Map.of());
    }

    /** Writes {@code b[off, off + len)} as one chunk (or as raw body bytes with a length). */
    public void write(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return;
        }
        if (chunked) {
            out.write((Integer.toHexString(len) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(b, off, len);
            out.write('\r');
            out.write('\n');
        } else {
            out.write(b, off, len);
        }
        out.flush();
    }

    /** Writes all of {@code body} in pieces of {@code piece} bytes. */
    public void writeAll(byte[] body, int piece) throws IOException {
        for (int at = 0; at < body.length; at += piece) {
            write(body, at, Math.min(piece, body.length - at));
        }
    }

    /** Ends the body (the last chunk; nothing to send for a body with a length). */
    public void end() throws IOException {
        if (chunked) {
            out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }
    }

    /** Reads one whole response: the head and its {@code Content-Length} body; "" if the relay closed first. */
    public String response() throws IOException {
        return HttpExchange.readResponse(in);
    }

    /** Reads a response head only (an interim {@code 100 Continue}). */
    public String head() throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** The status code of a response read by {@link #response}, or -1 if there was none. */
    public static int status(String response) {
        return response.startsWith("HTTP/1.1 ") && response.length() >= 12
                ? Integer.parseInt(response.substring(9, 12)) : -1;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
