package dev.crossbar.testing.archcanary.a;

import dev.crossbar.testing.archcanary.b.Second;

/** Half of a package cycle kept on purpose: {@code ArchitectureRulesTest} proves the rule sees it. */
public final class First {
    public Second next() {
        return new Second();
    }
}
