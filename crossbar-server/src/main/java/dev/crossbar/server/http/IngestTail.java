package dev.crossbar.server.http;

import io.netty.channel.ChannelPipeline;

/**
 * Fits the handlers that take an admitted HTTP ingest request and its body (the token check, the
 * publisher) at the end of a pipeline the {@link IngestGate} has emptied behind itself. Owned by
 * {@code http} so that the gate needs nothing from the parts that implement it.
 */
@FunctionalInterface
public interface IngestTail {

    /** Adds the ingest's handlers at the end of {@code pipeline}. */
    void fit(ChannelPipeline pipeline);
}
