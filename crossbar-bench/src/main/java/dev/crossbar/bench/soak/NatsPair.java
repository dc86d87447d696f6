package dev.crossbar.bench.soak;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two {@code nats-server} processes on loopback joined by a route, as a campus runs NATS for two
 * relay nodes: each node is given both, its own first. A server can be killed (SIGKILL) and started
 * again on the same ports, or frozen (SIGSTOP) and thawed (SIGCONT). Each logs to {@code nats-<i>.log}.
 */
final class NatsPair implements AutoCloseable {

    private final Path dir;
    private final String executable;
    private final int[] clientPorts = new int[2];
    private final int[] clusterPorts = new int[2];
    private final Process[] processes = new Process[2];

    NatsPair(Path dir, String executable) throws IOException {
        this.dir = dir;
        this.executable = executable;
        List<Integer> ports = freePorts(4);
        clientPorts[0] = ports.get(0);
        clientPorts[1] = ports.get(1);
        clusterPorts[0] = ports.get(2);
        clusterPorts[1] = ports.get(3);
        Files.writeString(dir.resolve("nats.conf"), "no_sys_acc: true\n");
        start(0);
        start(1);
    }

    /** {@code n} distinct free loopback ports. */
    static List<Integer> freePorts(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                held.add(s);
                ports.add(s.getLocalPort());
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
        return ports;
    }

    String url(int i) {
        return "nats://127.0.0.1:" + clientPorts[i];
    }

    long pid(int i) {
        return processes[i].pid();
    }

    /** Starts server {@code i} (again) on its ports and waits until it accepts connections. */
    void start(int i) throws IOException {
        String routes = "nats://127.0.0.1:" + clusterPorts[0] + ",nats://127.0.0.1:" + clusterPorts[1];
        List<String> cmd = List.of(executable, "-c", dir.resolve("nats.conf").toString(), "-a", "127.0.0.1",
                "-p", String.valueOf(clientPorts[i]), "-n", "nats-" + i, "--cluster_name", "soak",
                "--cluster", "nats://127.0.0.1:" + clusterPorts[i], "--routes", routes);
        File log = dir.resolve("nats-" + i + ".log").toFile();
        processes[i] = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Socket s = new Socket("127.0.0.1", clientPorts[i])) {
                return;
            } catch (IOException notYet) {
                if (!processes[i].isAlive() || System.nanoTime() > deadline) {
                    throw new IOException("nats-" + i + " did not start; see " + log);
                }
                sleep(100);
            }
        }
    }

    void kill(int i) throws InterruptedException {
        processes[i].destroyForcibly();
        processes[i].waitFor(10, TimeUnit.SECONDS);
    }

    /** Freezes server {@code i} (SIGSTOP): its sockets stay open and nothing answers, as a hung host. */
    void freeze(int i) throws IOException, InterruptedException {
        signal("STOP", processes[i].pid());
    }

    void thaw(int i) throws IOException, InterruptedException {
        signal("CONT", processes[i].pid());
    }

    static void signal(String name, long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kill", "-" + name, String.valueOf(pid)).inheritIO().start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("kill -" + name + " " + pid + " failed");
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws Exception {
        for (int i = 0; i < 2; i++) {
            if (processes[i] != null && processes[i].isAlive()) {
                thaw(i);
                kill(i);
            }
        }
    }
}
