package dev.crossbar.bench.soak;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A WebSocket receiver on a plain socket: the upgrade by hand, then the relay's frames (unmasked,
 * final, binary or text) parsed from the byte stream, each whole message to its sink; pings
 * answered. The soak's viewers read with it, not with the JDK's client, whose reader (JDK 17.0.15)
 * was seen to drop exactly 32 KiB from a busy connection's byte stream: the rest of one message
 * and the next seven went missing, read as one message of the right length and wrong bytes, and
 * the connection then failed with a {@code ProtocolException}. {@link Storm} shows it: viewers of
 * both kinds on the same streams, the JDK's see it and these never do.
 */
final class RawViewer implements Client {

    private static final int MAX_MESSAGE = 16 * 1024 * 1024;

    final CompletableFuture<Ws.Ending> ended = new CompletableFuture<>();
    private final Socket socket;
    private final OutputStream out;

    /** Connects to {@code uri} and reads {@code reads} messages (then no more: a stalled viewer), each to {@code sink}. */
    RawViewer(URI uri, Ws.Sink sink, long reads) throws IOException {
        socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), (int) Ws.TIMEOUT.toMillis());
            socket.setSoTimeout((int) Ws.TIMEOUT.toMillis());
            out = socket.getOutputStream();
            out.write(("GET " + uri.getPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\nUser-Agent: crossbar-soak\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
            StringBuilder head = new StringBuilder();
            while (head.length() < 4 || !head.substring(head.length() - 4).equals("\r\n\r\n")) {
                head.append((char) in.readUnsignedByte());
            }
            if (!head.toString().startsWith("HTTP/1.1 101")) {
                throw new IOException("not upgraded: " + head.toString().lines().findFirst().orElse(""));
            }
            socket.setSoTimeout(0);
            Thread reader = new Thread(() -> read(in, sink, reads), "soak-raw-viewer");
            reader.setDaemon(true);
            reader.start();
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    private void read(DataInputStream in, Ws.Sink sink, long reads) {
        try {
            for (long n = 0; n < reads; ) {
                int b0 = in.readUnsignedByte();
                int b1 = in.readUnsignedByte();
                long length = b1 & 0x7F;
                if (length == 126) {
                    length = in.readUnsignedShort();
                } else if (length == 127) {
                    length = in.readLong();
                }
                if ((b0 & 0x80) == 0 || (b0 & 0x70) != 0 || (b1 & 0x80) != 0 || length > MAX_MESSAGE) {
                    throw new IOException("not a frame the relay sends: " + Integer.toHexString(b0) + " " + Integer.toHexString(b1));
                }
                byte[] payload = new byte[(int) length];
                in.readFully(payload);
                switch (b0 & 0x0F) {
                    case 0x1, 0x2 -> {
                        sink.message(payload, (b0 & 0x0F) == 0x1);
                        n++;
                    }
                    case 0x8 -> {
                        int code = payload.length >= 2 ? ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF) : 1005;
                        String reason = payload.length > 2 ? new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8) : "";
                        ended.complete(new Ws.Ending(code, reason));
                        socket.close();
                        return;
                    }
                    case 0x9 -> pong(payload);
                    default -> { }
                }
            }
            // A stalled viewer: connected, reading nothing more, until the soak ends.
        } catch (IOException e) {
            ended.complete(new Ws.Ending(-1, String.valueOf(e)));
        }
    }

    /** A client's frames are masked (RFC 6455 5.3). */
    private synchronized void pong(byte[] payload) throws IOException {
        byte[] mask = new byte[4];
        ThreadLocalRandom.current().nextBytes(mask);
        byte[] frame = new byte[6 + payload.length];
        frame[0] = (byte) 0x8A;
        frame[1] = (byte) (0x80 | payload.length);
        System.arraycopy(mask, 0, frame, 2, 4);
        for (int i = 0; i < payload.length; i++) {
            frame[6 + i] = (byte) (payload[i] ^ mask[i & 3]);
        }
        out.write(frame);
        out.flush();
    }

    @Override
    public CompletableFuture<Ws.Ending> ended() {
        return ended;
    }

    @Override
    public void abort() {
        ended.complete(new Ws.Ending(-1, "aborted by the client"));
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a socket that is going anyway
        }
    }
}
