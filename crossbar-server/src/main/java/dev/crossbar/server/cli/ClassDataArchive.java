package dev.crossbar.server.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes the relay's class-data-sharing archive: the JVM's own means of starting faster. A relay's
 * first client waits for the classes of the upgrade, the relaying and the statistics to load;
 * from the archive they are mapped ready-made instead (15-25 ms sooner; it holds about 1 MiB more
 * resident idle than the JDK's own archive alone, docs/benchmarks.md).
 *
 * <pre>
 * java -cp crossbar.jar dev.crossbar.server.cli.ClassDataArchive crossbar.jsa java [JVM flags] -jar crossbar.jar
 * </pre>
 *
 * <p>Starts the relay with that command, {@code -XX:ArchiveClassesAtExit} and
 * {@code --listen 127.0.0.1:0}, uses each of its paths once over loopback (a camera on
 * {@code /in/} with two viewers, a data topic of three clients, the statistics page, its JSON
 * socket, the metrics and the health check), stops it with SIGTERM, and the JVM writes the archive
 * as it exits. The build makes one beside the jar and the container image its own; an archive
 * belongs to the JDK build and the jar it was made with (with another, the relay says so in one
 * line and starts without it). Nothing here runs inside the relay.
 */
public final class ClassDataArchive {

    private static final Pattern LISTENING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");
    /** Bounds every step, so that a relay that does not answer fails the build instead of hanging it. */
    private static final Duration STEP = Duration.ofSeconds(30);
    private static final int FRAMES = 30;
    private static final int FRAME_BYTES = 4_600;

    private ClassDataArchive() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: ClassDataArchive ARCHIVE JAVA [JVM FLAGS] -jar crossbar.jar");
            System.exit(2);
        }
        Path archive = Path.of(args[0]);
        Files.deleteIfExists(archive);
        List<String> command = new ArrayList<>();
        command.add(args[1]);
        command.add("-XX:ArchiveClassesAtExit=" + archive);
        command.addAll(List.of(args).subList(2, args.length));
        command.addAll(List.of("--listen", "127.0.0.1:0"));
        Process relay = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            int port = port(relay);
            exercise(port);
        } finally {
            relay.destroy();
            if (!relay.waitFor(STEP.toSeconds(), TimeUnit.SECONDS)) {
                relay.destroyForcibly();
            }
        }
        if (!Files.isRegularFile(archive) || Files.size(archive) == 0) {
            System.err.println("ClassDataArchive: the relay exited (" + relay.exitValue() + ") without writing " + archive);
            System.exit(1);
        }
    }

    /** The port the relay says it listens on; its other output before that is shown, the rest drained unread. */
    private static int port(Process relay) throws Exception {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(relay.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        port.complete(Integer.parseInt(m.group(1)));
                    } else if (!port.isDone()) {
                        System.err.println(line);
                    }
                }
            } catch (IOException e) {
                port.completeExceptionally(e);
            }
            port.completeExceptionally(new IOException("the relay exited before it listened"));
        }, "relay-output");
        reader.setDaemon(true);
        reader.start();
        return port.get(STEP.toSeconds(), TimeUnit.SECONDS);
    }

    /** The relay's paths, each once: the classes a first client would otherwise wait for. */
    private static void exercise(int port) throws Exception {
        String base = "127.0.0.1:" + port;
        HttpClient http = HttpClient.newBuilder().connectTimeout(STEP).build();
        int viewers = 2;
        int dataClients = 3;
        CountDownLatch received = new CountDownLatch(viewers * FRAMES + dataClients * (dataClients - 1));
        List<WebSocket> sockets = new ArrayList<>();
        for (int i = 0; i < viewers; i++) {
            sockets.add(open(http, "ws://" + base + "/out/lab/camera", received));
        }
        WebSocket camera = open(http, "ws://" + base + "/in/lab/camera", received);
        sockets.add(camera);
        List<WebSocket> data = new ArrayList<>();
        for (int i = 0; i < dataClients; i++) {
            data.add(open(http, "ws://" + base + "/lab/data", received));
        }
        sockets.addAll(data);
        WebSocket stats = open(http, "ws://" + base + "/ws", new CountDownLatch(0));
        sockets.add(stats);
        // The viewers joined before the camera's first frame, so every frame reaches both.
        Thread.sleep(200);
        for (int i = 0; i < FRAMES; i++) {
            camera.sendBinary(ByteBuffer.allocate(FRAME_BYTES).putInt(0, i), true).get(STEP.toSeconds(), TimeUnit.SECONDS);
        }
        for (int i = 0; i < dataClients; i++) {
            data.get(i).sendText("{\"sensor\":" + i + ",\"value\":0.5}", true).get(STEP.toSeconds(), TimeUnit.SECONDS);
        }
        if (!received.await(STEP.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException("the relay did not deliver the exercise's messages");
        }
        for (String path : List.of("/stats", "/metrics", "/healthz")) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + base + path)).timeout(STEP).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException(path + " answered " + r.statusCode());
            }
        }
        for (WebSocket s : sockets) {
            s.sendClose(WebSocket.NORMAL_CLOSURE, "").get(STEP.toSeconds(), TimeUnit.SECONDS);
        }
    }

    private static WebSocket open(HttpClient http, String url, CountDownLatch received) throws Exception {
        return http.newWebSocketBuilder().connectTimeout(STEP).buildAsync(URI.create(url), new WebSocket.Listener() {
            @Override
            public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer message, boolean last) {
                return counted(ws, last);
            }

            @Override
            public CompletionStage<?> onText(WebSocket ws, CharSequence message, boolean last) {
                return counted(ws, last);
            }

            private CompletionStage<?> counted(WebSocket ws, boolean last) {
                if (last) {
                    received.countDown();
                }
                ws.request(1);
                return CompletableFuture.completedFuture(null);
            }
        }).get(STEP.toSeconds(), TimeUnit.SECONDS);
    }
}
