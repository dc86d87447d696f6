package dev.crossbar.server;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The package graph of Crossbar's own classes, as imports in the compiled code make it (what
 * ArchitectureTest checks), drawn as a Mermaid flowchart for docs/packages.md.
 */
final class PackageGraph {

    private static final String BASE = "dev.crossbar.";

    private final Map<String, Set<String>> edges;

    private PackageGraph(Map<String, Set<String>> edges) {
        this.edges = edges;
    }

    static PackageGraph of(JavaClasses classes) {
        Map<String, Set<String>> edges = new TreeMap<>();
        for (JavaClass c : classes) {
            String from = name(c.getPackageName());
            if (from == null) {
                continue;
            }
            edges.computeIfAbsent(from, k -> new TreeSet<>());
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String to = name(d.getTargetClass().getPackageName());
                if (to != null && !to.equals(from)) {
                    edges.get(from).add(to);
                }
            }
        }
        return new PackageGraph(edges);
    }

    /** {@code server.http} for {@code dev.crossbar.server.http}; null outside Crossbar. */
    private static String name(String pkg) {
        return pkg.startsWith(BASE) ? pkg.substring(BASE.length()) : null;
    }

    /** The whole of docs/packages.md. */
    String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("# Packages\n\n")
                .append("Generated from the compiled classes by `ArchitectureTest` (crossbar-server); do not edit. An arrow\n")
                .append("is an import: `a --> b` means a uses b. The test fails if this drawing is stale, and on any\n")
                .append("package cycle. See [architecture.md](architecture.md) for what each package does.\n\n")
                .append("```mermaid\nflowchart TD\n");
        for (String module : new String[] {"server", "core"}) {
            b.append("  subgraph ").append(module).append("[crossbar-").append(module).append("]\n");
            for (String p : edges.keySet()) {
                if (p.equals(module) || p.startsWith(module + ".")) {
                    b.append("    ").append(id(p)).append("[\"").append(p).append("\"]\n");
                }
            }
            b.append("  end\n");
        }
        edges.forEach((from, tos) -> tos.forEach(to -> b.append("  ").append(id(from)).append(" --> ").append(id(to)).append('\n')));
        b.append("```\n");
        return b.toString();
    }

    private static String id(String p) {
        return p.replace('.', '_');
    }
}
