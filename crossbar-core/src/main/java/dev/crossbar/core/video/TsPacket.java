package dev.crossbar.core.video;

import io.netty.buffer.ByteBuf;

/**
 * Reads one whole 188-byte MPEG-TS packet (ISO/IEC 13818-1, 2.4.3) and says whether a video
 * decoder can start there. Stateless; the caller decides which of the two signals it trusts.
 */
final class TsPacket {

    static final int SIZE = 188;
    static final byte SYNC = 0x47;
    /** payload_unit_start_indicator in the packet header read as a big-endian int. */
    static final int HEADER_PAYLOAD_UNIT_START = 0x40_0000;

    /** The packet is not where a video frame starts, or not one a decoder can start from. */
    static final int NONE = 0;
    /** A video PES starts here and the adaptation field sets random_access_indicator. */
    static final int RANDOM_ACCESS_INDICATOR = 1;
    /**
     * A video PES starts here without random_access_indicator, but its payload begins with an
     * MPEG-1/2 sequence header or an H.264 SPS or IDR slice: a keyframe by its content.
     */
    static final int KEYFRAME_CONTENT = 2;

    private static final int PES_HEADER_FIXED = 9;
    private static final int MPEG_SEQUENCE_HEADER = 0xB3;
    private static final int H264_NAL_SLICE = 1;
    private static final int H264_NAL_IDR = 5;
    private static final int H264_NAL_SPS = 7;

    private TsPacket() {
    }

    /**
     * Classifies the packet at {@code at} in {@code buf} (absolute index, 188 readable bytes, sync
     * byte already checked). Only a packet that starts a PES with a video stream_id (0xE0-0xEF)
     * counts: ffmpeg sets random_access_indicator on every audio frame too, and without a PMT the
     * PES stream_id is what tells video from audio.
     */
    static int classify(ByteBuf buf, int at) {
        int b1 = buf.getUnsignedByte(at + 1);
        if ((b1 & 0x80) != 0 || (b1 & 0x40) == 0) {
            return NONE; // transport error, or no payload_unit_start_indicator: not a PES start
        }
        int control = (buf.getUnsignedByte(at + 3) >> 4) & 0x3;
        if ((control & 0x1) == 0) {
            return NONE; // adaptation field only, no payload
        }
        int end = at + SIZE;
        int payload = at + 4;
        boolean rai = false;
        if ((control & 0x2) != 0) {
            int afLength = buf.getUnsignedByte(at + 4);
            if (afLength > 0) {
                rai = (buf.getUnsignedByte(at + 5) & 0x40) != 0;
            }
            payload = at + 5 + afLength;
        }
        // A PES header: 00 00 01, stream_id, length (2), flags (2), header_data_length.
        if (payload + PES_HEADER_FIXED > end
                || buf.getUnsignedByte(payload) != 0 || buf.getUnsignedByte(payload + 1) != 0
                || buf.getUnsignedByte(payload + 2) != 1) {
            return NONE;
        }
        int streamId = buf.getUnsignedByte(payload + 3);
        if ((streamId & 0xF0) != 0xE0) {
            return NONE;
        }
        if (rai) {
            return RANDOM_ACCESS_INDICATOR;
        }
        if ((buf.getUnsignedByte(payload + 6) & 0xC0) != 0x80) {
            return NONE; // not the MPEG-2 PES syntax TS carries
        }
        int es = payload + PES_HEADER_FIXED + buf.getUnsignedByte(payload + 8);
        return keyframeContent(buf, es, end) ? KEYFRAME_CONTENT : NONE;
    }

    /**
     * Whether the elementary stream bytes in [from, end) begin a keyframe: the first start code is
     * an MPEG-1/2 sequence header, or the NAL units before the first slice include an H.264 SPS
     * (which encoders put before an IDR) or the IDR slice itself. Only this packet is read: an
     * access unit delimiter, SPS and PPS fit in the first packet of any encoder's keyframe.
     */
    private static boolean keyframeContent(ByteBuf buf, int from, int end) {
        boolean first = true;
        for (int i = from; i + 3 < end; i++) {
            if (buf.getByte(i) != 0 || buf.getByte(i + 1) != 0 || buf.getByte(i + 2) != 1) {
                continue;
            }
            int code = buf.getUnsignedByte(i + 3);
            if (first && (code == MPEG_SEQUENCE_HEADER || code == 0 || code >= 0x80)) {
                // MPEG-1/2 video (an H.264 NAL header is below 0x80 and never 0): only a sequence header
                // starts a GOP; a picture start code (0x00) does not.
                return code == MPEG_SEQUENCE_HEADER;
            }
            first = false;
            int nalType = code & 0x1F;
            if (nalType == H264_NAL_SPS || nalType == H264_NAL_IDR) {
                return true;
            }
            if (nalType == H264_NAL_SLICE) {
                return false;
            }
            i += 3;
        }
        return false;
    }
}
