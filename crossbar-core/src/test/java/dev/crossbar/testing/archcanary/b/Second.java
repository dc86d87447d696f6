package dev.crossbar.testing.archcanary.b;

import dev.crossbar.testing.archcanary.a.First;

/** The other half of the deliberate cycle (see {@link First}). */
public final class Second {
    public First back() {
        return new First();
    }
}
