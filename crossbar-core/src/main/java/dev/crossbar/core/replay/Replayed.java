package dev.crossbar.core.replay;

import io.netty.buffer.ByteBuf;

/**
 * One remembered message handed to a newcomer. Ownership: the receiver of a {@code Replayed} owns
 * {@code payload}'s reference and must release it (framing it hands the reference on).
 */
public record Replayed(boolean text, ByteBuf payload) {
}
