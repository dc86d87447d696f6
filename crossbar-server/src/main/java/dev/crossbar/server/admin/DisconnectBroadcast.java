package dev.crossbar.server.admin;

import java.util.function.Consumer;

/**
 * How a disconnect reaches the other nodes of a cluster (the {@code cluster} package's link); owned
 * here so that the endpoint needs nothing from the parts that implement it.
 */
public interface DisconnectBroadcast {

    /** A node on its own: there is no one else to tell. */
    DisconnectBroadcast NONE = new DisconnectBroadcast() {
        @Override
        public void listen(Consumer<Disconnect> local) {
        }

        @Override
        public void publish(Disconnect d) {
        }
    };

    /** Disconnects the other nodes publish are handed to {@code local} (any thread); called before the link starts. */
    void listen(Consumer<Disconnect> local);

    /** Tells every other node; never blocks. */
    void publish(Disconnect d);
}
