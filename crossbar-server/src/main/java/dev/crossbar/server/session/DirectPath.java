package dev.crossbar.server.session;

import dev.crossbar.server.websocket.ConnectionLifecycle;
import dev.crossbar.server.websocket.FrameDecoder;
import dev.crossbar.server.websocket.ProtocolViolations;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.websocketx.Utf8FrameValidator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.util.Map;
import java.util.Set;

/**
 * Whether a connection's whole messages (binary, or text all in ASCII) may go from its
 * {@link FrameDecoder} straight to its session ({@link FrameDecoder#directTo}), past the handlers
 * between them.
 *
 * <p>Each message down the pipeline costs a frame object and a hand-off per handler, and those
 * handlers only pass such a message on: Netty's UTF-8 check has nothing to find in ASCII, its
 * protocol handler answers control frames only, {@link ProtocolViolations} only catches errors,
 * {@link ConnectionLifecycle} does not read, and {@link MessageAssembler} passes a whole message
 * on unless it has failed the connection (which the session checks). Taking them off that path
 * took about a fifth off the relay's user-space time per message in ping-pong (docs/benchmarks/journal.md).
 * Any other inbound handler between the two (access control, first-message authentication, one
 * added later) might act on messages, so its presence keeps every message on the pipeline. The
 * check is made once; whatever later puts a handler there that acts on messages switches the
 * direct path off ({@code FrameDecoder.directTo(null)}), as {@link ProtocolViolations} does when
 * it gives its place to the handler that drops everything after a violation.
 */
final class DirectPath {

    /** Inbound handlers that pass a whole binary or ASCII text message on unchanged; matched by exact class. */
    private static final Set<Class<?>> PASS_ON = Set.of(Utf8FrameValidator.class, ProtocolViolations.class,
            WebSocketServerProtocolHandler.class, ConnectionLifecycle.class, MessageAssembler.class);

    private DirectPath() {
    }

    /**
     * The decoder ahead of {@code session} in {@code pipeline} if every inbound handler between
     * them is one of {@link #PASS_ON}; else null.
     */
    static FrameDecoder decoderFor(ChannelPipeline pipeline, ChannelHandler session) {
        FrameDecoder decoder = null;
        for (Map.Entry<String, ChannelHandler> entry : pipeline) {
            ChannelHandler handler = entry.getValue();
            if (handler == session) {
                return decoder;
            }
            if (handler instanceof FrameDecoder d) {
                decoder = d;
            } else if (decoder != null && handler instanceof ChannelInboundHandler
                    && !PASS_ON.contains(handler.getClass())) {
                return null;
            }
        }
        return null;
    }
}
