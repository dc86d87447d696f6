package dev.crossbar.bench.soak;

import java.util.concurrent.CompletableFuture;

/** One soak client's connection, whichever library reads it: how it ends, and ending it. */
interface Client {

    /** Completed with how the connection ended. */
    CompletableFuture<Ws.Ending> ended();

    default boolean open() {
        return !ended().isDone();
    }

    /** Ends the connection at once (no close handshake), as a client that goes away. */
    void abort();
}
