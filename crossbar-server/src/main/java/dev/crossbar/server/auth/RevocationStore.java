package dev.crossbar.server.auth;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * Where revocations outlive the node that heard them: a file on a node on its own
 * ({@link RevocationFile}), a JetStream key-value bucket in a cluster (the {@code cluster}
 * package's), or nowhere ({@link #MEMORY}). Owned here so that the access rules need nothing from
 * the parts that implement it.
 */
public interface RevocationStore extends AutoCloseable {

    /** Nothing kept: revocations last as long as this process. */
    RevocationStore MEMORY = new RevocationStore() {
        @Override
        public void start(Consumer<Revocation> sink) {
        }

        @Override
        public void save(Revocation r) {
        }

        @Override
        public String describe() {
            return "this node's memory (forgotten at restart)";
        }

        @Override
        public void close() {
        }
    };

    /**
     * Starts: every revocation the store holds, and each one saved later by any node sharing it, is
     * handed to {@code sink} (any thread; the same one may come more than once).
     */
    void start(Consumer<Revocation> sink);

    /**
     * Keeps {@code r} (merged with what the store holds for the same ids: the later expiry wins).
     * May block; never called on an event loop.
     *
     * @throws IOException saying why it could not be kept (then only this node knows of it)
     */
    void save(Revocation r) throws IOException;

    /** Where revocations are kept, for the start-up line and the revoke endpoint's answer. */
    String describe();

    @Override
    void close();
}
