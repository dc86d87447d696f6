package dev.crossbar.server;

import dev.crossbar.server.testing.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** One raw HTTP exchange, so a test controls the request byte for byte (paths, upgrade headers). */
final class RawHttp {

    private RawHttp() {
    }

    /**
     * Sends {@code request} and returns the relay's answer: one whole response when it says its
     * length (the connection may stay open), otherwise everything until the relay closes.
     */
    static String request(int port, String request) throws IOException {
        return HttpExchange.exchange(port, request.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** A WebSocket upgrade request for {@code path}. */
    static String upgrade(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    }

    /** The first bytes a relay answers to an upgrade: the status line and headers, without waiting for close. */
    static String upgradeHead(int port, String path) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(upgrade(path).getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = s.getInputStream();
            StringBuilder b = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                b.append((char) c);
                if (b.length() >= 4 && b.substring(b.length() - 4).equals("\r\n\r\n")) {
                    break;
                }
            }
            return b.toString();
        }
    }
}
