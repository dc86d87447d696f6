package dev.crossbar.server.session;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.crossbar.server.websocket.ConnectionLifecycle;
import dev.crossbar.server.websocket.FrameDecoder;
import dev.crossbar.server.websocket.FrameEncoder;
import dev.crossbar.server.websocket.ProtocolViolations;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.Utf8FrameValidator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The decoder hands messages straight to the session only across handlers that would pass them on
 * unchanged: the relay's own pipeline after the upgrade, in its order; any other inbound handler
 * between them (access control, first-message authentication) keeps messages on the pipeline.
 */
class DirectPathTest {

    private final FrameDecoder decoder = new FrameDecoder(1024);
    private final ChannelHandler session = new ChannelInboundHandlerAdapter();

    private EmbeddedChannel relayPipeline(ChannelHandler extraBeforeSession) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(FrameEncoder.INSTANCE, decoder, new Utf8FrameValidator(), ProtocolViolations.INSTANCE,
                new WebSocketServerProtocolHandler("/"), new ConnectionLifecycle(2), new MessageAssembler(1024));
        // As after the upgrade: Netty's handshake handler, added with the protocol handler, has gone.
        ch.pipeline().toMap().entrySet().stream()
                .filter(e -> e.getValue().getClass().getSimpleName().equals("WebSocketServerProtocolHandshakeHandler"))
                .map(Map.Entry::getKey)
                .toList().forEach(ch.pipeline()::remove);
        if (extraBeforeSession != null) {
            ch.pipeline().addLast(extraBeforeSession);
        }
        ch.pipeline().addLast(session);
        return ch;
    }

    @Test
    void theRelaysOwnHandlersPassMessagesOnSoTheDecoderMayHandThemStraightOver() {
        EmbeddedChannel ch = relayPipeline(null);
        assertSame(decoder, DirectPath.decoderFor(ch.pipeline(), session));
        ch.finishAndReleaseAll();
    }

    @Test
    void anyOtherInboundHandlerBetweenThemKeepsMessagesOnThePipeline() {
        EmbeddedChannel ch = relayPipeline(new ChannelInboundHandlerAdapter());
        assertNull(DirectPath.decoderFor(ch.pipeline(), session));
        ch.finishAndReleaseAll();
    }

    @Test
    void withoutTheRelaysDecoderThereIsNoDirectPath() {
        EmbeddedChannel ch = new EmbeddedChannel(new MessageAssembler(1024), session);
        assertNull(DirectPath.decoderFor(ch.pipeline(), session));
        ch.finishAndReleaseAll();
    }
}
