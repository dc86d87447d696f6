package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.crossbar.server.cluster.NatsBroker;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NatsCluster;
import dev.crossbar.server.testing.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator files in {@code docs/ops/} against a live relay: every metric the Grafana dashboard
 * and the Prometheus alert rules name is one the relay exports, scraped from {@code /metrics} of a
 * relay with a NATS link and traffic (some meters only exist then), so neither can drift from the
 * code. The systemd unit keeps its hardening. The README's run command, the Dockerfile, the unit
 * and operations.md start the JVM with the same settings (the container's memory sized from its
 * limit instead), and this JVM accepts them.
 */
class OpsFilesIT {

    private static final Path OPS = Path.of("..", "docs", "ops");
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** PromQL words that are not metric names: functions, aggregations, modifiers. */
    private static final Set<String> PROMQL = Set.of("sum", "min", "max", "avg", "count", "rate", "irate", "increase",
            "delta", "deriv", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
            "bool", "offset", "absent", "absent_over_time", "clamp_min", "clamp_max", "max_over_time", "min_over_time",
            "avg_over_time", "changes", "resets", "time", "vector", "scalar", "topk", "bottomk", "label_replace",
            "histogram_quantile", "abs", "round", "sum_over_time", "count_over_time", "last_over_time", "sgn", "inf",
            "nan", "e");
    /** Label matchers, range selectors, grouping lists, strings and Grafana variables: none names a metric. */
    private static final Pattern NOT_NAMES = Pattern.compile(
            "\\{[^}]*}|\\[[^]]*]|\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)|\"[^\"]*\"|'[^']*'|\\$\\w+");
    /** Series Prometheus makes itself for every target, not exported by the relay. */
    private static final Set<String> SYNTHETIC = Set.of("up");
    private static final Pattern IDENT = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

    @TempDir
    static Path dir;
    private static NatsCluster nats;
    private static CrossbarServer relay;
    private static PrometheusText exported;

    @BeforeAll
    static void scrapeALiveRelay() throws Exception {
        nats = NatsCluster.single(dir, NatsCluster.freePort());
        relay = CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1)).nodeName("ops-test")
                .nats(NatsConfig.builder().servers(nats.url(0)).build()).build());
        await("NATS link up", WAIT, () -> relay.cluster().state() == NatsBroker.State.CONNECTED);
        // Traffic and a GC, so every meter the relay registers lazily exists.
        try (JdkClient pub = JdkClient.connect(uri("/in/cam"));
             JdkClient sub = JdkClient.connect(uri("/out/cam"))) {
            await("publisher and subscriber joined", WAIT, () -> relay.topics().size() == 1
                    && relay.topics().topics().iterator().next().members().length == 2);
            pub.sendBinary(new byte[100]);
            sub.take(WAIT);
            System.gc();
            Thread.sleep(300); // the traffic tally serves one walk for a quarter of a second
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + relay.port() + "/metrics")).timeout(WAIT).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            exported = PrometheusText.parse(r.body());
        }
    }

    @AfterAll
    static void stop() {
        if (relay != null) {
            relay.close();
        }
        if (nats != null) {
            nats.close();
        }
    }

    private static URI uri(String path) {
        return URI.create("ws://127.0.0.1:" + relay.port() + path);
    }

    /** Metric names in a PromQL expression. */
    static Set<String> metricNames(String expr) {
        String stripped = NOT_NAMES.matcher(expr).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENT.matcher(stripped);
        while (m.find()) {
            String word = m.group();
            int before = m.start() - 1;
            // Skip numbers' exponents and duration units ("5m", "1e3"): an identifier glued to a digit.
            if (before >= 0 && Character.isDigit(stripped.charAt(before))) {
                continue;
            }
            if (!PROMQL.contains(word)) {
                names.add(word);
            }
        }
        return names;
    }

    private static void collectExprs(JsonNode node, List<String> out) {
        if (node.isObject()) {
            node.properties().forEach(e -> {
                if (e.getKey().equals("expr") && e.getValue().isTextual()) {
                    out.add(e.getValue().asText());
                } else {
                    collectExprs(e.getValue(), out);
                }
            });
        } else if (node.isArray()) {
            node.forEach(n -> collectExprs(n, out));
        }
    }

    private static void assertExported(String file, List<String> exprs) {
        assertTrue(exprs.size() >= 5, file + " has only " + exprs.size() + " expressions");
        List<String> unknown = new ArrayList<>();
        Set<String> named = new TreeSet<>();
        for (String e : exprs) {
            Set<String> names = metricNames(e);
            assertTrue(!names.isEmpty(), file + ": no metric in '" + e + "'");
            for (String n : names) {
                named.add(n);
                if (!exported.has(n) && !SYNTHETIC.contains(n)) {
                    unknown.add(n + " (in '" + e + "')");
                }
            }
        }
        assertTrue(unknown.isEmpty(), file + " names metrics the relay does not export: " + unknown);
        assertTrue(named.stream().anyMatch(n -> n.startsWith("crossbar_")), file + " names no crossbar metric: " + named);
    }

    @Test
    void theDashboardNamesOnlyExportedMetrics() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(OPS.resolve("grafana-dashboard.json").toFile());
        assertTrue(dashboard.path("panels").size() >= 6, "panels");
        List<String> exprs = new ArrayList<>();
        collectExprs(dashboard, exprs);
        assertExported("grafana-dashboard.json", exprs);
    }

    @Test
    void theAlertRulesNameOnlyExportedMetricsAndCoverWhatOperatorsNeed() throws Exception {
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(OPS.resolve("prometheus-alerts.yml").toFile());
        List<String> exprs = new ArrayList<>();
        Set<String> alerts = new TreeSet<>();
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                assertTrue(rule.path("alert").isTextual() && rule.path("expr").isTextual(), rule.toString());
                assertTrue(rule.path("annotations").path("summary").isTextual(), "summary of " + rule.path("alert"));
                alerts.add(rule.path("alert").asText());
                exprs.add(rule.path("expr").asText());
            }
        }
        assertExported("prometheus-alerts.yml", exprs);
        for (String needed : List.of("CrossbarMessagesDropped", "CrossbarTopicSilent", "CrossbarNatsLinkDown",
                "CrossbarConnectionsNearLimit", "CrossbarDirectMemoryNearLimit")) {
            assertTrue(alerts.contains(needed), needed + " missing from " + alerts);
        }
    }

    @Test
    void theExpressionParserFindsNamesAndOnlyNames() {
        assertEquals(Set.of("crossbar_messages_dropped_total"),
                metricNames("sum by (instance) (rate(crossbar_messages_dropped_total{job=\"crossbar\"}[5m])) > 0"));
        assertEquals(Set.of("a_total", "b"), metricNames("a_total / on(instance) b offset 1h > 1e3"));
        assertTrue(!exported.has("crossbar_no_such_metric"), "the check can fail");
    }

    @Test
    void theReadmeDockerfileAndUnitStartTheJvmAlikeAndTheJvmAcceptsIt() throws Exception {
        Set<String> readme = jvmOptions(Files.readString(Path.of("..", "README.md")));
        Set<String> docker = jvmOptions(Files.readString(Path.of("..", "docker", "Dockerfile")));
        Set<String> unit = jvmOptions(Files.readString(OPS.resolve("crossbar.service")));
        Set<String> operations = jvmOptions(Files.readString(Path.of("..", "docs", "operations.md")));
        assertTrue(readme.contains("-XX:TrimNativeHeapInterval=5000"), "README's command: " + readme);
        // Each has the class-data archive beside its own jar, so only the flag is compared, not its path.
        for (var other : List.of(unit, operations)) {
            assertTrue(withoutArchivePath(other).containsAll(withoutArchivePath(readme)),
                    "lacks some of README's " + readme + ": " + other);
        }
        // The container sizes heap and direct memory from its limit instead (-XX:MaxRAMPercentage);
        // every other flag is the README's.
        Set<String> fixedSizes = new TreeSet<>(readme);
        fixedSizes.removeIf(o -> !o.startsWith("-Xmx") && !o.startsWith("-XX:MaxDirectMemorySize="));
        Set<String> readmeButSizes = new TreeSet<>(readme);
        readmeButSizes.removeAll(fixedSizes);
        assertEquals(2, fixedSizes.size(), "README's heap and direct memory: " + fixedSizes);
        assertTrue(withoutArchivePath(docker).containsAll(withoutArchivePath(readmeButSizes)),
                "lacks some of README's " + readmeButSizes + ": " + docker);
        for (var production : List.of(docker, unit)) {
            assertTrue(production.contains("-XX:+ExitOnOutOfMemoryError"), "restarted when out of memory: " + production);
        }
        // A JVM too old for one of them (a flag added in a JDK update) refuses to start at all.
        for (var options : List.of(readme, docker)) {
            List<String> command = new ArrayList<>();
            command.add(ProcessHandle.current().info().command().orElseThrow());
            command.addAll(options);
            command.add("-version");
            // Its output goes to a file, so the wait below is the only one and it is bounded.
            Path output = dir.resolve("java-version.txt");
            Process java = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            assertTrue(java.waitFor(30, TimeUnit.SECONDS), "java -version did not end");
            assertEquals(0, java.exitValue(), command + ": " + Files.readString(output));
        }
    }

    private static Set<String> withoutArchivePath(Set<String> options) {
        Set<String> out = new TreeSet<>();
        for (String o : options) {
            out.add(o.startsWith("-XX:SharedArchiveFile=") ? "-XX:SharedArchiveFile=" : o);
        }
        return out;
    }

    /**
     * The -X and -XX options, and -D properties, of the first java command in a file's text: from
     * its first {@code -Xms} to the {@code -jar} or closing quote after it.
     */
    private static Set<String> jvmOptions(String text) {
        Matcher first = Pattern.compile("[\\s\"]-Xms").matcher(text);
        assertTrue(first.find(), "no java command with -Xms");
        int start = first.start();
        int jar = text.indexOf(" -jar", start);
        int quote = text.indexOf('"', start + 1);
        int end = jar < 0 ? quote : quote < 0 ? jar : Math.min(jar, quote);
        String command = text.substring(start, end < 0 ? text.length() : end);
        Set<String> options = new TreeSet<>();
        Matcher m = Pattern.compile("(?<=[\\s\"])-(?:XX?[:a-zA-Z][^\\s\"\\\\]*|D[a-zA-Z.]+=[^\\s\"\\\\]+)").matcher(command);
        while (m.find()) {
            options.add(m.group());
        }
        return options;
    }

    @Test
    void theSystemdUnitIsHardened() throws Exception {
        String unit = Files.readString(OPS.resolve("crossbar.service"));
        for (String line : List.of("User=crossbar", "NoNewPrivileges=true", "ProtectSystem=strict", "PrivateTmp=true",
                "LimitNOFILE=", "MemoryMax=", "ExecStart=")) {
            assertTrue(unit.lines().anyMatch(l -> l.startsWith(line)), "crossbar.service lacks " + line);
        }
    }
}
