package dev.crossbar.server.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real front proxy (Debian's {@code haproxy} or {@code nginx}) in front of a relay, started by a
 * test with a configuration it writes, on a free loopback port; {@link #close()} kills it. Where the
 * program is missing the test is skipped with the command that installs it, except under CI
 * ({@code CI=true}), where a missing program fails the test: CI installs it.
 */
public final class ProxyProcess implements AutoCloseable {

    private final Process process;
    private final int port;
    private final Path log;

    private ProxyProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** The program's path, or the test skipped (failed under CI) saying how to install it. */
    public static String executable(String name) {
        for (String d : List.of("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")) {
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        String how = name + " not found: install it (Debian: apt-get install " + name + "; ./test.sh does)";
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError(how);
        }
        Assumptions.assumeTrue(false, how);
        return null;
    }

    /** HAProxy in TCP mode, sending each connection to {@code relayPort} behind a PROXY protocol v2 header. */
    public static ProxyProcess haproxy(Path dir, int relayPort) {
        String exe = executable("haproxy");
        int port = NatsCluster.freePort();
        String cfg = String.join("\n",
                "global",
                "  maxconn 4096",
                "defaults",
                "  mode tcp",
                "  timeout connect 5s",
                "  timeout client 60s",
                "  timeout server 60s",
                "frontend campus",
                "  bind 127.0.0.1:" + port,
                "  default_backend relays",
                "backend relays",
                "  server relay 127.0.0.1:" + relayPort + " send-proxy-v2",
                "");
        return launch(dir, "haproxy", cfg, port, cfgFile -> List.of(exe, "-db", "-f", cfgFile.toString()));
    }

    /** nginx proxying WebSockets to {@code relayPort}, adding the client to {@code X-Forwarded-For}. */
    public static ProxyProcess nginx(Path dir, int relayPort) {
        String exe = executable("nginx");
        int port = NatsCluster.freePort();
        Path tmp = dir.resolve("nginx-tmp");
        try {
            Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        String cfg = String.join("\n",
                root ? "user root;" : "",
                "worker_processes 1;",
                "daemon off;",
                "pid " + dir.resolve("nginx.pid") + ";",
                "error_log " + dir.resolve("nginx-error.log") + " warn;",
                "events { worker_connections 1024; }",
                "http {",
                "  access_log off;",
                "  client_body_temp_path " + tmp + "/body;",
                "  proxy_temp_path " + tmp + "/proxy;",
                "  fastcgi_temp_path " + tmp + "/fastcgi;",
                "  uwsgi_temp_path " + tmp + "/uwsgi;",
                "  scgi_temp_path " + tmp + "/scgi;",
                "  server {",
                "    listen 127.0.0.1:" + port + ";",
                "    location / {",
                "      proxy_pass http://127.0.0.1:" + relayPort + ";",
                "      proxy_http_version 1.1;",
                "      proxy_set_header Upgrade $http_upgrade;",
                "      proxy_set_header Connection \"upgrade\";",
                "      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
                "      proxy_read_timeout 3600s;",
                "    }",
                "  }",
                "}",
                "");
        return launch(dir, "nginx", cfg, port, cfgFile -> List.of(exe, "-p", dir.toString(), "-c", cfgFile.toString()));
    }

    private static ProxyProcess launch(Path dir, String name, String cfg, int port,
                                       java.util.function.Function<Path, List<String>> command) {
        try {
            Path cfgFile = dir.resolve(name + ".conf");
            Files.writeString(cfgFile, cfg);
            Path log = dir.resolve(name + ".log");
            Process p = new ProcessBuilder(new ArrayList<>(command.apply(cfgFile))).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            ProxyProcess proxy = new ProxyProcess(p, port, log);
            try {
                RelayServerExtension.await(name + " listening on " + port, Duration.ofSeconds(10), () -> {
                    if (!p.isAlive()) {
                        throw new AssertionError(name + " exited: " + proxy.logText());
                    }
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                        return true;
                    } catch (IOException e) {
                        return false;
                    }
                });
            } catch (RuntimeException | Error e) {
                proxy.close();
                throw e;
            }
            return proxy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // nginx's worker is a child of its own: it goes with its master, whom destroy() asked to stop.
    }
}
