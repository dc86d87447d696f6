package dev.crossbar.bench.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.cluster.NatsBroker;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What one message costs across two nodes, on a lossless stream ({@code /in/files/x}, under
 * {@code slow=backpressure}) and on an ordinary one ({@code /in/plain/x}): a {@code nats-server} on
 * loopback, nodes A and B in this JVM, a publisher on A writing messages of one size to a subscriber
 * on B, never more than {@link #WINDOW_BYTES} ahead of it (so that neither kind drops anything and
 * both carry the same messages). Each size runs ordinary then lossless, {@code rounds} times, after
 * a warm-up of both.
 *
 * <p>Per message it prints this JVM's CPU (both nodes and both clients: the clients cost the same
 * for either kind, so the difference is the link's), the NATS server's CPU, how many NATS messages
 * the server took in (chunks, acknowledgements, heartbeats) and the rate.
 *
 * <pre>
 * java -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.cluster.LinkCost [sizes] [rounds] [kinds]
 *   sizes  comma-separated bytes (default 1024,65536,1048576)
 *   rounds per size and kind (default 3)
 *   kinds  ordinary,lossless (default both; "ordinary" alone runs on builds without lossless links)
 * </pre>
 */
public final class LinkCost {

    /** Bytes in flight at most: the publisher waits for the subscriber beyond this. */
    static final long WINDOW_BYTES = 8L * 1024 * 1024;
    /** Bytes each run carries (at least 200 messages, at most 50,000). */
    static final long RUN_BYTES = 192L * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private LinkCost() {
    }

    public static void main(String[] args) throws Exception {
        int[] sizes = java.util.Arrays.stream((args.length > 0 ? args[0] : "1024,65536,1048576").split(","))
                .mapToInt(Integer::parseInt).toArray();
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        List<String> kinds = List.of((args.length > 2 ? args[2] : "ordinary,lossless").split(","));
        Path dir = Files.createTempDirectory("linkcost");
        int natsPort = freePort();
        int monitorPort = freePort();
        Process nats = new ProcessBuilder(natsServer(), "-a", "127.0.0.1", "-p", String.valueOf(natsPort),
                "-m", String.valueOf(monitorPort)).redirectErrorStream(true)
                .redirectOutput(dir.resolve("nats.log").toFile()).start();
        try {
            waitFor(() -> varz(monitorPort) != null, "nats-server");
            String url = "nats://127.0.0.1:" + natsPort;
            try (CrossbarServer a = node("node-a", url); CrossbarServer b = node("node-b", url)) {
                System.out.printf("%-9s %9s %9s %10s %10s %11s %11s %9s %7s%n", "kind", "size", "messages", "msg/s",
                        "MB/s", "JVM us/msg", "NATS us/msg", "NATS in", "resent");
                for (String kind : kinds) {
                    run(a, b, kind, 1024, 5000, nats.pid(), monitorPort, false); // warm-up
                }
                for (int size : sizes) {
                    int n = (int) Math.max(200, Math.min(50_000, RUN_BYTES / size));
                    for (int r = 0; r < rounds; r++) {
                        for (String kind : kinds) {
                            run(a, b, kind, size, n, nats.pid(), monitorPort, true);
                        }
                    }
                }
            }
        } finally {
            nats.destroy();
            nats.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private static void run(CrossbarServer a, CrossbarServer b, String kind, int size, int n, long natsPid,
                            int monitorPort, boolean print) throws Exception {
        String topic = kind.equals("lossless") ? "files/x" : "plain/x";
        try (Socket sub = connect(b.port(), "/out/" + topic); Socket pub = connect(a.port(), "/in/" + topic)) {
            AtomicLong received = new AtomicLong();
            Thread reader = new Thread(() -> read(sub, received, n), "subscriber");
            reader.setDaemon(true);
            reader.start();
            Thread.sleep(300); // node B's subscription reaches the server
            byte[] frame = frame(size);
            OutputStream out = pub.getOutputStream();
            long natsIn0 = varz(monitorPort).path("in_msgs").asLong();
            boolean lossless = kind.equals("lossless");
            long resent0 = lossless ? a.cluster().stats().resent() : 0;
            long natsCpu0 = procCpuNanos(natsPid);
            long cpu0 = jvmCpuNanos();
            long t0 = System.nanoTime();
            long window = Math.max(1, WINDOW_BYTES / size);
            for (int i = 0; i < n; i++) {
                while (i - received.get() >= window) {
                    LockSupport.parkNanos(100_000); // asleep, not spinning: the JVM's CPU is what is measured
                    if (!reader.isAlive()) {
                        throw new IllegalStateException("subscriber gone after " + received.get() + " of " + n);
                    }
                }
                out.write(frame);
            }
            out.flush();
            reader.join(60_000);
            long t1 = System.nanoTime();
            long cpu1 = jvmCpuNanos();
            long natsCpu1 = procCpuNanos(natsPid);
            long natsIn1 = varz(monitorPort).path("in_msgs").asLong();
            // Only on a lossless run: "ordinary" alone also runs against builds without that counter.
            long resent = lossless ? a.cluster().stats().resent() - resent0 : 0;
            if (received.get() != n) {
                throw new IllegalStateException(kind + ": " + received.get() + " of " + n + " arrived");
            }
            double seconds = (t1 - t0) / 1e9;
            if (print) {
                System.out.printf("%-9s %9d %9d %10.0f %10.1f %11.1f %11.1f %9.2f %7d%n", kind, size, n, n / seconds,
                        (double) n * size / seconds / 1e6, (cpu1 - cpu0) / 1e3 / n, (natsCpu1 - natsCpu0) / 1e3 / n,
                        (double) (natsIn1 - natsIn0) / n, resent);
            }
        }
        Thread.sleep(500); // the topics go, and their streams' last heartbeats
    }

    private static CrossbarServer node(String name, String url) {
        CrossbarServer s = CrossbarServer.start(ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(2)
                .nodeName(name)
                .routing(new RoutingTable(RoutingTable.parseAll(List.of("/files/**:slow=backpressure"))))
                .nats(NatsConfig.builder().servers(url).build())
                .build());
        waitFor(() -> s.cluster().state() == NatsBroker.State.CONNECTED, name + " connected");
        return s;
    }

    /** A masked binary frame (zero key: the payload reads as written) of {@code size} bytes. */
    private static byte[] frame(int size) {
        int header = size < 126 ? 2 : size <= 0xffff ? 4 : 10;
        byte[] f = new byte[header + 4 + size];
        f[0] = (byte) 0x82;
        if (size < 126) {
            f[1] = (byte) (0x80 | size);
        } else if (size <= 0xffff) {
            f[1] = (byte) (0x80 | 126);
            f[2] = (byte) (size >>> 8);
            f[3] = (byte) size;
        } else {
            f[1] = (byte) (0x80 | 127);
            for (int i = 0; i < 8; i++) {
                f[2 + i] = (byte) ((long) size >>> (56 - 8 * i));
            }
        }
        return f;
    }

    /** Reads frames until {@code n} data messages arrived, answering pings. */
    private static void read(Socket s, AtomicLong received, int n) {
        try {
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[64 * 1024];
            while (received.get() < n) {
                int b0 = in.readUnsignedByte();
                int b1 = in.readUnsignedByte();
                long len = b1 & 0x7f;
                if (len == 126) {
                    len = in.readUnsignedShort();
                } else if (len == 127) {
                    len = in.readLong();
                }
                int op = b0 & 0x0f;
                if (op == 0x9) {
                    byte[] p = new byte[(int) len];
                    in.readFully(p);
                    byte[] pong = new byte[6 + p.length];
                    pong[0] = (byte) 0x8A;
                    pong[1] = (byte) (0x80 | p.length);
                    System.arraycopy(p, 0, pong, 6, p.length);
                    out.write(pong);
                    continue;
                }
                for (long left = len; left > 0; ) {
                    int k = in.read(buf, 0, (int) Math.min(buf.length, left));
                    if (k < 0) {
                        return;
                    }
                    left -= k;
                }
                if (op == 0x8) {
                    return;
                }
                if (op == 0x2 && (b0 & 0x80) != 0) {
                    received.incrementAndGet();
                }
            }
        } catch (IOException e) {
            // the run ends with fewer than n, and says so
        }
    }

    private static Socket connect(int port, String path) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        s.setSoTimeout(30_000);
        s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        InputStream in = s.getInputStream();
        int matched = 0;
        StringBuilder head = new StringBuilder();
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed during upgrade: " + head);
            }
            head.append((char) c);
            matched = (c == "\r\n\r\n".charAt(matched)) ? matched + 1 : (c == '\r' ? 1 : 0);
        }
        if (!head.toString().startsWith("HTTP/1.1 101")) {
            throw new IOException(path + ": " + head);
        }
        return s;
    }

    private static long jvmCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** User and system CPU of process {@code pid}, from /proc (clock ticks of 10 ms). */
    private static long procCpuNanos(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    }

    private static JsonNode varz(int monitorPort) {
        try (InputStream in = URI.create("http://127.0.0.1:" + monitorPort + "/varz").toURL().openStream()) {
            return JSON.readTree(in);
        } catch (IOException e) {
            return null;
        }
    }

    private static String natsServer() {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.add("/usr/sbin");
        dirs.add("/usr/bin");
        for (String d : dirs) {
            Path p = Path.of(d.isEmpty() ? "." : d, "nats-server");
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        throw new IllegalStateException("nats-server not found on PATH (Debian: apt-get install nats-server)");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + what);
            }
        }
    }
}
