import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A JVM that starts some of the libraries an idle relay starts, as the relay uses them, then
 * sleeps: what each one adds to an idle relay's RSS (docs/benchmarks.md, Memory). Run by
 * idle-parts.sh with the relay's jar on the class path; the argument names the parts, comma
 * separated: picocli, logback, micrometer, binders (with micrometer), netty; none for a bare JVM.
 */
public final class IdleParts {

    public static void main(String[] args) throws Exception {
        Set<String> parts = new HashSet<>(Arrays.asList(args.length > 0 ? args[0].split(",") : new String[0]));
        List<Object> held = new ArrayList<>();
        System.setProperty("io.netty.jfr.enabled", "false"); // as the relay's Main sets it
        if (parts.contains("picocli")) { // the relay's own command line, parsed
            picocli.CommandLine line = new picocli.CommandLine(new dev.crossbar.server.cli.CrossbarCommand());
            line.parseArgs("--listen", "127.0.0.1:0");
            held.add(line);
        }
        if (parts.contains("logback")) { // the relay's logging configuration, one line logged
            org.slf4j.LoggerFactory.getLogger("idle-parts").info("started");
        }
        if (parts.contains("micrometer")) { // the registry, one counter; no scrape: an idle relay makes none
            var registry = new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
                    io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
            io.micrometer.core.instrument.Counter.builder("idle.parts").register(registry).increment();
            if (parts.contains("binders")) {
                new io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics().bindTo(registry);
                new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
                new io.micrometer.core.instrument.binder.jvm.JvmGcMetrics().bindTo(registry);
                new io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics().bindTo(registry);
                new io.micrometer.core.instrument.binder.system.ProcessorMetrics().bindTo(registry);
                new io.micrometer.core.instrument.binder.system.UptimeMetrics().bindTo(registry);
            }
            held.add(registry);
        }
        if (parts.contains("netty")) { // an acceptor and two event loops on epoll, one port bound
            var factory = io.netty.channel.epoll.EpollIoHandler.newFactory();
            var accept = new io.netty.channel.MultiThreadIoEventLoopGroup(1, factory);
            var io = new io.netty.channel.MultiThreadIoEventLoopGroup(2, factory);
            var bootstrap = new io.netty.bootstrap.ServerBootstrap().group(accept, io)
                    .channel(io.netty.channel.epoll.EpollServerSocketChannel.class)
                    .childHandler(new io.netty.channel.ChannelInboundHandlerAdapter());
            held.add(bootstrap.bind("127.0.0.1", 0).sync().channel());
        }
        System.out.println("ready " + held.size());
        Thread.sleep(120_000);
    }
}
