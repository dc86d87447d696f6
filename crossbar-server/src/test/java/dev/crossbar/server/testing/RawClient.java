package dev.crossbar.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * A WebSocket client written on a bare socket, for what well-behaved clients cannot do: stay
 * silent, skip pongs, send unmasked or malformed frames, half a request.
 */
public final class RawClient implements AutoCloseable {

    public final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    /** A frame as the relay sent it (server frames are unmasked); {@code fin} is its FIN bit. */
    public record Frame(int opcode, byte[] payload, boolean fin) {
        public int closeCode() {
            return payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : -1;
        }

        public String closeReason() {
            return payload.length > 2 ? new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8) : "";
        }
    }

    public RawClient(int port) throws IOException {
        this(port, 0);
    }

    /**
     * A client whose socket has a receive buffer of {@code receiveBuffer} bytes (0: the default):
     * a small one makes a client that stops reading felt by the relay soon.
     */
    public RawClient(int port, int receiveBuffer) throws IOException {
        this(null, port, receiveBuffer);
    }

    /**
     * A client connecting from {@code localAddress} (any of loopback's 127.0.0.0/8 on Linux), so
     * that the relay sees another client address than 127.0.0.1; null for the system's choice.
     */
    public RawClient(String localAddress, int port) throws IOException {
        this(localAddress, port, 0);
    }

    private RawClient(String localAddress, int port, int receiveBuffer) throws IOException {
        socket = new Socket();
        if (localAddress != null) {
            socket.bind(new java.net.InetSocketAddress(localAddress, 0));
        }
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer); // before connecting, so the window is small from the start
        }
        socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), 10_000);
        socket.setSoTimeout(10_000);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
    }

    public void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Sends an upgrade request for {@code path} with extra header lines, returns the response head. */
    public String upgrade(String path, String... headers) throws IOException {
        StringBuilder req = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n");
        for (String h : headers) {
            req.append(h).append("\r\n");
        }
        req.append("\r\n");
        send(req.toString().getBytes(StandardCharsets.ISO_8859_1));
        return readHead();
    }

    /** Reads one whole HTTP response (head and {@code Content-Length} body); "" if the relay closed first. */
    public String readResponse() throws IOException {
        return HttpExchange.readResponse(in);
    }

    /** Reads an HTTP response head (through the blank line). */
    public String readHead() throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** A client frame: always masked (with a zero key, which is legal) unless {@code masked} is false. */
    public static byte[] frame(int firstByte, byte[] payload, boolean masked) {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write(firstByte);
        int maskBit = masked ? 0x80 : 0;
        if (payload.length < 126) {
            f.write(maskBit | payload.length);
        } else if (payload.length > 0xffff) {
            f.write(maskBit | 127);
            for (int shift = 56; shift >= 0; shift -= 8) {
                f.write((int) ((long) payload.length >>> shift));
            }
        } else {
            f.write(maskBit | 126);
            f.write(payload.length >>> 8);
            f.write(payload.length);
        }
        if (masked) {
            f.writeBytes(new byte[4]);
        }
        f.writeBytes(payload);
        return f.toByteArray();
    }

    /** Next frame from the relay, or null if the socket closed or {@code timeoutMillis} passed. */
    public Frame readFrame(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        try {
            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            long len = b1 & 0x7f;
            if (len == 126) {
                len = in.readUnsignedShort();
            } else if (len == 127) {
                len = in.readLong();
            }
            byte[] payload = new byte[(int) len];
            in.readFully(payload);
            return new Frame(b0 & 0x0f, payload, (b0 & 0x80) != 0);
        } catch (EOFException | SocketTimeoutException e) {
            return null;
        }
    }

    /** Reads frames until a close frame (returned), end of stream or timeout (null). */
    public Frame readUntilClose(int timeoutMillis) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            Frame f = readFrame((int) Math.max(1, deadline - System.currentTimeMillis()));
            if (f == null) {
                return null;
            }
            if (f.opcode() == 0x8) {
                return f;
            }
        }
        return null;
    }

    /** True once the relay has closed the connection (read returns end of stream). */
    public boolean closedByPeer(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        InputStream raw = socket.getInputStream();
        try {
            while (raw.read() >= 0) {
                // drain anything still in flight
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset also means closed
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
