package dev.crossbar.server.session;

import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.audit.Audit;
import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.FrameRun;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.relay.SharedFrameBuffers;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.stats.ClientIdentity;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.route.StreamOptions;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicLimitException;
import dev.crossbar.server.config.SlowConsumerPolicy;
import dev.crossbar.server.auth.Permit;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import dev.crossbar.server.websocket.FrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket connection as a member of its topic: joins when the upgrade completes, hands each
 * whole message to the {@link Router}, writes what the router delivers, leaves when the channel
 * closes.
 *
 * <p>Ownership: this is the last inbound handler. A data frame's content is handed to
 * {@link Router#publish}, which takes that reference; anything else that reaches here is released.
 * Whole messages may come straight from the frame decoder instead ({@link DirectPath}):
 * their payload's reference is handed on, or released if the message is not relayed.
 * For delivery, the {@link PreparedFrame} is borrowed: a small frame's bytes are copied into this
 * session's {@link #coalesced} buffer, which is written at the flush (the channel's outbound buffer
 * then releases it) or released if the connection is closing or closed first; a larger frame is
 * written as a {@code retainedDuplicate()}, which the outbound buffer releases once sent or failed.
 *
 * <p>Deliveries are frames already encoded, written and flushed from the frame encoder's context:
 * the handlers between here and there (the lifecycle, Netty's protocol handler) would only refuse
 * them after a close frame, and walking them was 8 % of the relay's CPU in fan-out to 5,000.
 * So every write here first checks {@link ConnectionLifecycle#isClosing()}, which every close frame
 * sets, whoever wrote it.
 *
 * <p>Back-pressure, from what the receiver is doing: up to {@code maxQueueBytes} may wait for any
 * receiver; beyond that, a receiver that has read some of its queue within {@code stallNanos} may
 * have up to {@code maxBacklogBytes} waiting (by default twice the largest message), so a reader
 * that keeps up never loses a message to a burst of large ones. A receiver that has read nothing
 * for longer is stalled: a message that does not fit its {@code maxQueueBytes} is dropped whole
 * and counted; the sender and other receivers never wait for it. An empty queue takes any one
 * message. Under the {@code DISCONNECT} policy a receiver still dropping after the grace period is
 * closed (1013). Memory per receiver is at most {@code maxBacklogBytes} and one more message;
 * queued frames over 1 KiB are duplicates of buffers shared by every receiver of the message,
 * smaller ones the receiver's own copies (below), counted against the same bounds.
 *
 * <p>Small frames written between two flushes are copied into one buffer, written at the flush:
 * one write, one outbound entry and one socket buffer for the lot, as a client library writing its
 * queue does. Writing each as a duplicate of the shared frame cost, per message and receiver, an
 * object, two reference counts, an outbound entry with its accounting, and an element of the
 * system call's vector: more than copying a few hundred bytes. A frame too large to be worth
 * copying goes out as before, after what was coalesced ahead of it. Nothing is coalesced on
 * {@code max-latency} and lossless streams, whose bounds read the channel's own queue.
 *
 * <p>On a stream with {@code max-latency}, messages beyond a few kilobytes in the channel wait in a
 * {@link LatencyQueue} instead, which skips the receiver forward when they would reach it too late,
 * counting the time they will still spend in the sockets, from the receiver's measured pace; the
 * socket's send buffer is made small ({@code latencySocketBytes}), so little is beyond reach.
 */
public final class RelaySession extends ChannelInboundHandlerAdapter implements Member {

    private static final Logger log = LoggerFactory.getLogger(RelaySession.class);

    /** Pending bytes that still count as an empty queue: Netty adds ~100 bytes per queued write. */
    static final int QUEUE_SLACK_BYTES = 4096;
    /** On {@code max-latency} streams: what the channel may hold before the latency queue holds it. */
    static final int LATENCY_CHANNEL_BYTES = 4096;
    /**
     * Frames up to this size are copied into the {@link #coalesced} buffer rather than written one
     * by one. Larger ones stay shared: their copy would cost more than the bookkeeping it saves, and
     * a backlog of shared frames holds each message once, however many receivers are behind.
     */
    static final int COALESCE_MAX_FRAME_BYTES = SharedFrameBuffers.COPIED_MAX_BYTES;
    /** The most one coalesced buffer holds; a frame that does not fit starts the next one. */
    static final int COALESCE_BUFFER_BYTES = 16 * 1024;

    private final Router router;
    private final ChannelGroup sessions;
    private final int maxQueueBytes;
    private final long maxBacklogBytes;
    private final long stallNanos;
    private final SlowConsumerPolicy slowPolicy;
    private final long slowGraceMillis;
    private final int latencySocketBytes;
    private final long backpressureTimeoutNanos;
    private final long maxLosslessBacklogBytes;
    private final SendBrakes brakes;
    /** This sender's limits (picked when it joins); {@link SendBrake#NONE} without any. */
    private SendBrake brake = SendBrake.NONE;
    /** What a message over the limits costs: the connection (true) or the message. */
    private boolean closeOverLimit;
    /** The limits, for the close reason. */
    private dev.crossbar.core.route.SendLimits limits;

    private final ConnectionStats stats = ConnectionStats.startingNow();
    private ChannelHandlerContext ctx;
    /** The frame encoder's context, where deliveries are written and flushed (set on joining). */
    private ChannelHandlerContext out;
    private ClientInfo client;
    /** Who this client is, for statistics (set on joining). */
    private ClientIdentity identity;
    private Topic topic;
    private boolean needsFlush;
    /**
     * When the socket read that brought the messages now being relayed was handled: one clock read
     * for all the messages of a read, not one each; valid while {@link #readStamped}.
     */
    private long readAtNanos;
    /** Set by a read's first message, cleared when the read completes. */
    private boolean readStamped;
    /** Small frames written since the last flush, not yet in the channel; null when none. */
    private ByteBuf coalesced;
    /** How many bytes the last coalesced buffer held: what the next one is likely to need. */
    private int lastCoalescedBytes;
    /** This connection's keepalive and closing handshake (an earlier handler in the pipeline). */
    private ConnectionLifecycle lifecycle;
    /** Checked for whole messages taken straight from the decoder; null if none or not direct. */
    private MessageAssembler assembler;
    /** Whether {@link #takeDirectPath} has run. */
    private boolean directPathChecked;
    private ScheduledFuture<?> slowTimer;
    /** What this connection's token allows; null when access control is off. */
    private Permit permit;
    /** Frame bytes this session has written to its channel; with the pending bytes, what was read. */
    private long writtenBytes;
    /** Bytes the client had taken off its queue when last looked at, and when that last grew. */
    private long drainedBytes;
    private long drainedAtNanos;
    /** This receiver's own queue on a {@code max-latency} stream; null on others. */
    private LatencyQueue latency;
    private long maxLatencyNanos;
    /** The socket's send buffer as the kernel reports it (Linux doubles what was asked). */
    private int socketBufferBytes;
    /** On a {@code max-latency} stream: how fast this receiver reads; null on others. */
    private ReceiverPace pace;
    private int lastFrameLength;
    /** On a {@code slow=backpressure} stream: who this receiver holds back when over its bound; else null. */
    private dev.crossbar.core.topic.HoldBack holdBack;
    /** While this receiver holds the senders: checks it still reads. */
    private ScheduledFuture<?> stallWatch;

    /**
     * @param maxQueueBytes   bytes any receiver may have waiting
     * @param maxBacklogBytes bytes a receiver that is still reading may have waiting
     * @param stallNanos      how long without reading makes a receiver stalled
     * @param latencySocketBytes on {@code max-latency} streams: the socket's send buffer
     * @param backpressureTimeoutNanos on {@code slow=backpressure} streams: how long a receiver that holds
     *                        the senders back may read nothing before it is closed
     * @param maxLosslessBacklogBytes on {@code slow=backpressure} streams: bytes a receiver may have
     *                        waiting (messages from other nodes, which arrive while the hold travels)
     * @param brakes          each sender's rate and bandwidth limits
     */
    public RelaySession(Router router, ChannelGroup sessions, int maxQueueBytes, long maxBacklogBytes, long stallNanos,
                        SlowConsumerPolicy slowPolicy, long slowGraceMillis, int latencySocketBytes,
                        long backpressureTimeoutNanos, long maxLosslessBacklogBytes, SendBrakes brakes) {
        this.router = requireNonNull(router, "router");
        this.sessions = requireNonNull(sessions, "sessions");
        this.maxQueueBytes = maxQueueBytes;
        this.maxBacklogBytes = Math.max(maxQueueBytes, maxBacklogBytes);
        this.stallNanos = stallNanos;
        this.slowPolicy = requireNonNull(slowPolicy, "slowPolicy");
        this.slowGraceMillis = slowGraceMillis;
        this.latencySocketBytes = latencySocketBytes;
        this.backpressureTimeoutNanos = backpressureTimeoutNanos;
        this.maxLosslessBacklogBytes = Math.max(maxBacklogBytes, maxLosslessBacklogBytes);
        this.brakes = requireNonNull(brakes, "brakes");
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.lifecycle = ConnectionLifecycle.of(ctx.pipeline());
    }

    /** Replaced or removed with frames still coalesced: they were never written, so they are released. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        discardCoalesced();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof HandshakeComplete) {
            joined(ctx);
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void joined(ChannelHandlerContext ctx) {
        // hasAttr first: attr() would add an empty attribute to every channel when access control is off.
        permit = ctx.channel().hasAttr(Permit.KEY) ? ctx.channel().attr(Permit.KEY).get() : null;
        if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
            ctx.pipeline().remove(HandshakeTimeout.class);
        }
        out = requireNonNull(ctx.pipeline().context(WebSocketFrameEncoder.class), "no WebSocket frame encoder");
        client = ctx.channel().attr(ClientInfo.KEY).get();
        if (client == null) {
            // Cannot happen through UpgradeGate; refuse rather than relay to an unknown topic.
            close(WebSocketCloseStatus.INTERNAL_SERVER_ERROR, "no route for this connection");
            return;
        }
        identity = new ClientIdentity(ctx.channel().id().asShortText(), client.remoteAddress(), client.userAgent(),
                permit == null ? null : permit.grant().sub(), permit == null ? null : permit.grant().jti());
        StreamOptions options = router.topics().routing().resolve(client.route().topic());
        if (options.boundsLatency() && client.route().canReceive()) {
            boundLatency(ctx.channel(), options);
        }
        limits = brakes.limitsFor(options);
        brake = brakes.brakeFor(limits, client.route().canSend(), System.nanoTime());
        closeOverLimit = limits.over() == dev.crossbar.core.route.SendLimits.OverLimit.CLOSE;
        if (options.lossless() && client.route().canReceive()) {
            // Over the bound, Netty's writability turns false: the signal to hold the senders back.
            ctx.channel().config().setWriteBufferWaterMark(new WriteBufferWaterMark(maxQueueBytes / 2, maxQueueBytes));
        }
        try {
            topic = router.join(this);
        } catch (TopicLimitException e) {
            // Lost a race with another new topic after the gate admitted us.
            close(CloseCodes.TRY_AGAIN_LATER, e.getMessage());
            return;
        }
        if (options.lossless() && client.route().canReceive()) {
            holdBack = topic.holdBack();
        }
        sessions.add(ctx.channel());
        log.debug("{} joined {} as {}", ctx.channel(), client.route().topic(), client.route().role().label());
        audit("connect").log();
    }

    /**
     * Before joining: what waits beyond a few kilobytes waits in this receiver's own queue, and the
     * socket's send buffer is made small. The options are looked up here from the same table the
     * topic got them from.
     */
    private void boundLatency(Channel ch, StreamOptions options) {
        maxLatencyNanos = options.maxLatency().toNanos();
        latency = new LatencyQueue(maxLatencyNanos, options.start() == StreamOptions.Start.KEYFRAME, maxBacklogBytes);
        pace = new ReceiverPace();
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(LATENCY_CHANNEL_BYTES / 2, LATENCY_CHANNEL_BYTES));
        ch.config().setOption(ChannelOption.SO_SNDBUF, latencySocketBytes);
        Integer reported = ch.config().getOption(ChannelOption.SO_SNDBUF);
        socketBufferBytes = reported == null ? latencySocketBytes : reported;
    }

    /**
     * How long a message written now will wait before the receiver has read it: what is ahead of it
     * (the channel, our socket's buffer as the kernel reports it, and, at the receiver, a message in
     * its socket and one it is reading) at the receiver's pace. Until the pace is known, half the
     * bound: a receiver that falls behind in its first moments is not let drift past the bound while
     * its pace is measured.
     */
    private long socketDelayNanos(int frameLength) {
        return pace.nanosFor(socketBufferBytes + pendingBytes() + 2L * frameLength, maxLatencyNanos / 2);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (topic != null && (msg instanceof BinaryWebSocketFrame || msg instanceof TextWebSocketFrame)) {
            if (!directPathChecked) {
                takeDirectPath();
            }
            publish(msg instanceof TextWebSocketFrame, ((io.netty.buffer.ByteBufHolder) msg).content());
        } else {
            io.netty.util.ReferenceCountUtil.release(msg);
        }
    }

    /**
     * At the first message down the pipeline, when the handlers set up with the upgrade (the codec
     * swap, a first-message authentication) have left it: from then on whole binary and ASCII text
     * messages come straight from the frame decoder if nothing between them would act on them
     * ({@link DirectPath}).
     */
    private void takeDirectPath() {
        directPathChecked = true;
        FrameDecoder decoder = DirectPath.decoderFor(ctx.pipeline(), this);
        if (decoder != null) {
            assembler = ctx.pipeline().get(MessageAssembler.class);
            decoder.directTo(this::directMessage);
        }
    }

    /**
     * A whole message straight from the frame decoder ({@link DirectPath}): relayed as one that
     * came down the pipeline would be, unless the session has left its topic or the assembler has
     * failed the connection (it would have dropped the message). Takes the reference.
     */
    private void directMessage(boolean text, ByteBuf payload) {
        if (topic == null || (assembler != null && assembler.closing())) {
            payload.release();
            return;
        }
        publish(text, payload);
    }

    /** Hands a whole message to the router, stamped with its read's time; takes the reference. */
    private void publish(boolean text, ByteBuf payload) {
        if (!readStamped) {
            readAtNanos = System.nanoTime();
            readStamped = true;
        }
        if (!brake.admit(payload.readableBytes(), readAtNanos)) {
            payload.release();
            overLimit();
            return;
        }
        router.publish(this, topic, text, payload, ctx.alloc(), readAtNanos);
    }

    /** An audit event about this connection: its address, token, path and role filled in. */
    private Audit.Event audit(String type) {
        Audit.Event e = Audit.event(type).field("connection", ctx.channel().id().asShortText())
                .address(RealAddress.of(ctx.channel())).topic(client.route().path()).role(client.route().role().label());
        if (permit != null) {
            e.sub(permit.grant().sub()).jti(permit.grant().jti());
        }
        return e;
    }

    /** A message over this sender's limits: dropped and counted, or the connection closed (1008). */
    private void overLimit() {
        if (!closeOverLimit) {
            brakes.counts().dropped.increment();
            return;
        }
        if (brake != SendBrake.STOPPED) {
            brake = SendBrake.STOPPED; // nothing more it sends is relayed
            brakes.counts().closed.increment();
            log.debug("{} over its send limit ({}); closing", ctx.channel(), limits.describe());
            close(CloseCodes.POLICY_VIOLATION, "over the send limit (" + limits.describe() + ")");
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        readStamped = false;
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (topic != null) {
            router.leave(this);
            topic = null;
            audit("close").code(lifecycle.closeCode()).reason(lifecycle.closeCode() == 0 ? "closed by the client"
                    : lifecycle.closeReason()).bytes(stats.bytesIn(), stats.bytesOut()).log();
        }
        cancelSlowTimer();
        cancelStallWatch();
        if (latency != null) {
            latency.clear();
        }
        discardCoalesced();
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (holdBack != null) {
            holdOrRelease(ctx.channel().isWritable());
        }
        if (ctx.channel().isWritable()) {
            cancelSlowTimer();
            if (latency != null) {
                long now = System.nanoTime();
                pace.observe(writtenBytes - pendingBytes(), now);
                recordDropped(latency.skipStale(now, socketDelayNanos(lastFrameLength), ctx.alloc()));
                if (pumpLatencyQueue()) {
                    flush();
                }
                pace.backlogged(!latency.isEmpty());
            }
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("{} connection error: {}", ctx.channel(), cause.toString());
        } else {
            log.warn("{} closing after unexpected error", ctx.channel(), cause);
        }
        ctx.close();
    }

    // ---- Member: called by the router on this channel's event loop ----

    @Override
    public EventExecutor executor() {
        return ctx.executor();
    }

    @Override
    public Route route() {
        return client.route();
    }

    @Override
    public ConnectionStats stats() {
        return stats;
    }

    @Override
    public ClientIdentity client() {
        return identity;
    }

    public Channel channel() {
        return ctx.channel();
    }

    @Override
    public boolean maySend() {
        return permit == null || permit.maySend();
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        if (!mayWrite()) {
            return false;
        }
        if (latency != null) {
            // The frame's publish time stands for now: it was read a moment ago, and costs no clock read.
            pace.observe(writtenBytes - pendingBytes(), System.nanoTime());
            lastFrameLength = frame.frameLength();
            recordDropped(latency.offer(frame.retain(), frame.publishedAtNanos(), socketDelayNanos(lastFrameLength),
                    ctx.alloc()));
            boolean flush = pumpLatencyQueue();
            pace.backlogged(!latency.isEmpty());
            return flush;
        }
        if (holdBack != null) {
            return deliverLossless(frame);
        }
        int length = frame.frameLength();
        long queued = pendingBytes();
        if (queued <= QUEUE_SLACK_BYTES) {
            // Nothing queued (Netty's per-entry bookkeeping aside): any one message may follow, and
            // the client has read all it was sent, so a stall can only start from now.
            drainedBytes = writtenBytes - queued;
            drainedAtNanos = frame.publishedAtNanos();
        } else if (queued + length > maxQueueBytes
                && (queued + length > maxBacklogBytes || stalled(queued, frame.publishedAtNanos()))) {
            stats.recordDropped();
            onSlow();
            return false;
        }
        return write(frame);
    }

    /**
     * Writes the run's buffer whole when all of it fits under the bound, so no message of it would
     * have been dropped one by one; otherwise, and on streams with their own pacing or holding
     * back, one by one as {@link #deliver} does.
     */
    @Override
    public boolean deliverRun(FrameRun run) {
        if (latency != null || holdBack != null) {
            return Member.super.deliverRun(run);
        }
        if (!mayWrite()) {
            return false;
        }
        long queued = pendingBytes();
        if (queued + run.length() > maxQueueBytes) {
            return Member.super.deliverRun(run);
        }
        if (queued <= QUEUE_SLACK_BYTES) {
            drainedBytes = writtenBytes - queued; // as deliver() would for the run's first message
            drainedAtNanos = run.frame(0).publishedAtNanos();
        }
        writeContent(run.content());
        for (int i = 0; i < run.count(); i++) {
            PreparedFrame frame = run.frame(i);
            stats.recordOut(frame.payloadLength(), frame.publishedAtNanos());
        }
        return newlyNeedsFlush();
    }

    /**
     * Whether frames may be written now. Closing: nothing may follow the close frame, and nothing
     * refused is counted as sent.
     */
    private boolean mayWrite() {
        return ctx.channel().isActive() && !lifecycle.isClosing() && (permit == null || permit.mayReceive());
    }

    /**
     * On a lossless stream: never drop. Local senders stop being read once this receiver is over its
     * bound, so what is queued stays near it; messages from other nodes cannot be held back that
     * way until the hold reaches their nodes, and a receiver that lets more than
     * {@code maxLosslessBacklogBytes} pile up is closed (1013) rather than losing any of them.
     */
    private boolean deliverLossless(PreparedFrame frame) {
        if (pendingBytes() + frame.frameLength() > maxLosslessBacklogBytes && pendingBytes() > QUEUE_SLACK_BYTES) {
            close(CloseCodes.TRY_AGAIN_LATER, "lossless stream: more than " + maxLosslessBacklogBytes
                    + " bytes waiting for this client (from other nodes, which cannot be held back)");
            return false;
        }
        return write(frame);
    }

    /**
     * Writes a duplicate of the frame and counts it.
     *
     * @return as {@link #deliver}: whether this left the channel needing a flush it did not need
     */
    private boolean write(PreparedFrame frame) {
        writeContent(frame.content());
        // The publish time, not a clock read per receiver: with 1,000 receivers the reads cost more
        // than the rest of counting, and "last message out" needs no finer truth than that.
        stats.recordOut(frame.payloadLength(), frame.publishedAtNanos());
        return newlyNeedsFlush();
    }

    /**
     * Writes shared frame bytes (one frame, or a run of them; borrowed): a few copied behind those
     * coalesced since the last flush, more as a duplicate, after what was coalesced before them.
     */
    private void writeContent(ByteBuf content) {
        int length = content.readableBytes();
        writtenBytes += length;
        if (length <= COALESCE_MAX_FRAME_BYTES && latency == null && holdBack == null) {
            coalesce(content);
        } else {
            writeCoalesced(); // what was written before these bytes goes before them
            out.write(content.retainedDuplicate(), out.voidPromise());
        }
    }

    /** Marks this session as needing a flush; whether it did not already. */
    private boolean newlyNeedsFlush() {
        if (needsFlush) {
            return false;
        }
        needsFlush = true;
        return true;
    }

    /** Copies a small frame's bytes behind those coalesced since the last flush. */
    private void coalesce(ByteBuf frameBytes) {
        int n = frameBytes.readableBytes();
        if (coalesced != null && coalesced.maxWritableBytes() < n) {
            writeCoalesced();
        }
        if (coalesced == null) {
            // Sized as the last one was filled, grown if more come: growing copies what it holds,
            // and a receiver sent one small frame per flush, reading slowly, queues buffers the
            // size of its frames, not of the limit.
            coalesced = ctx.alloc().directBuffer(Math.max(n, lastCoalescedBytes), Math.max(n, COALESCE_BUFFER_BYTES));
        }
        coalesced.writeBytes(frameBytes, frameBytes.readerIndex(), n);
    }

    /**
     * Writes the coalesced frames to the channel, unless a close frame has gone out meanwhile
     * (nothing may follow it; the connection is ending, so they would never be read).
     */
    private void writeCoalesced() {
        ByteBuf frames = coalesced;
        if (frames != null) {
            coalesced = null;
            lastCoalescedBytes = frames.readableBytes();
            if (lifecycle.isClosing()) {
                frames.release();
            } else {
                out.write(frames, out.voidPromise());
            }
        }
    }

    private void discardCoalesced() {
        if (coalesced != null) {
            coalesced.release();
            coalesced = null;
        }
    }

    /** Over its bound (not writable), this receiver holds the senders back, and is watched for a stall. */
    private void holdOrRelease(boolean writable) {
        if (writable) {
            holdBack.release(this);
            cancelStallWatch();
        } else {
            holdBack.hold(this);
            if (stallWatch == null) {
                long period = Math.max(1, backpressureTimeoutNanos / 4);
                long[] last = {writtenBytes - pendingBytes(), System.nanoTime()};
                stallWatch = ctx.executor().scheduleAtFixedRate(() -> {
                    long drained = writtenBytes - pendingBytes();
                    long now = System.nanoTime();
                    if (drained > last[0]) {
                        last[0] = drained;
                        last[1] = now;
                    } else if (now - last[1] >= backpressureTimeoutNanos) {
                        cancelStallWatch();
                        close(CloseCodes.TRY_AGAIN_LATER, "stalled: read nothing for "
                                + TimeUnit.NANOSECONDS.toSeconds(backpressureTimeoutNanos)
                                + "s of a lossless stream, holding its senders back");
                    }
                }, period, period, TimeUnit.NANOSECONDS);
            }
        }
    }

    private void cancelStallWatch() {
        if (stallWatch != null) {
            stallWatch.cancel(false);
            stallWatch = null;
        }
    }

    /** Stops or resumes reading this client's messages (a lossless stream's receivers are behind). */
    @Override
    public void holdReading(boolean hold) {
        ctx.channel().config().setAutoRead(!hold);
    }

    /** A replayed message (what the topic kept for newcomers): written whatever the queue holds. */
    @Override
    public boolean deliverReplay(PreparedFrame frame) {
        return mayWrite() && write(frame);
    }

    @Override
    public void flush() {
        if (needsFlush) { // else nothing was written since (a slice coming after a pump's flush)
            needsFlush = false;
            writeCoalesced();
            out.flush();
        }
    }

    /**
     * Moves frames from the latency queue to the channel while it is writable (below
     * {@code latencySocketBytes}); the writability event brings the rest.
     *
     * @return as {@link #deliver}: whether this left the channel needing a flush it did not need
     */
    private boolean pumpLatencyQueue() {
        boolean newlyNeedsFlush = false;
        Channel ch = ctx.channel();
        while (!latency.isEmpty() && ch.isWritable() && !lifecycle.isClosing()) {
            PreparedFrame f = latency.poll();
            try {
                newlyNeedsFlush |= write(f);
            } finally {
                f.release();
            }
        }
        return newlyNeedsFlush;
    }

    private void recordDropped(int messages) {
        for (int i = 0; i < messages; i++) {
            stats.recordDropped();
        }
    }

    /** Bytes written by this session that the client has not read: in the channel, or still coalesced. */
    private long pendingBytes() {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        long inChannel = out == null ? 0 : out.totalPendingWriteBytes();
        return coalesced == null ? inChannel : inChannel + coalesced.readableBytes();
    }

    /**
     * Whether the client has read nothing of its queue for longer than the stall timeout. What it
     * has read is what this session wrote less what is still pending (pings and other frames
     * written past the session make this a few bytes off).
     *
     * @param now the publish time of the message being delivered: a clock read that is already paid
     */
    private boolean stalled(long pending, long now) {
        long drained = writtenBytes - pending;
        // Only a rise is reading: Netty counts ~100 bytes of bookkeeping per queued write, so a new
        // write alone lowers this figure.
        boolean read = drained > drainedBytes;
        drainedBytes = drained;
        if (read) {
            drainedAtNanos = now;
            return false;
        }
        return now - drainedAtNanos > stallNanos;
    }

    /**
     * Under {@code DISCONNECT}: the first drop starts the grace period; if the client dropped more
     * messages during it (it is still not keeping up), it is closed with 1013. Draining below half
     * its bound (Netty's writability) cancels the timer. Only drops over this client's own bound
     * count: a message dropped because its event loop's backlog was full is not this client's doing.
     */
    private void onSlow() {
        if (slowPolicy == SlowConsumerPolicy.DISCONNECT && slowTimer == null) {
            long droppedAtStart = stats.droppedOverBound();
            slowTimer = ctx.executor().schedule(() -> {
                slowTimer = null;
                if (stats.droppedOverBound() > droppedAtStart) {
                    close(CloseCodes.TRY_AGAIN_LATER, "slow consumer: not reading fast enough for this stream");
                }
            }, slowGraceMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void cancelSlowTimer() {
        if (slowTimer != null) {
            slowTimer.cancel(false);
            slowTimer = null;
        }
    }

    /** Starts the closing handshake (see {@link ConnectionLifecycle#close}); deliveries stop now. */
    public void close(WebSocketCloseStatus status, String reason) {
        cancelSlowTimer();
        cancelStallWatch();
        if (holdBack != null) {
            holdBack.release(this); // closing: it reads nothing more, and must not hold the others
        }
        lifecycle.close(status, reason);
    }
}
