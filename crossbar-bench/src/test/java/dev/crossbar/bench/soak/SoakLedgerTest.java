package dev.crossbar.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** What the soak counts as missing, out of order or corrupt: the basis of its silent-hole verdict. */
class SoakLedgerTest {

    @Test
    void aVideoFrameIsMpegTsCarryingItsLabelAndReadsBackWholeOrAsItsTail() {
        Label l = new Label(7, 2, 60);
        byte[] f = VideoFrames.frame(l);
        assertEquals(VideoFrames.PACKETS * VideoFrames.PACKET, f.length);
        for (int at = 0; at < f.length; at += VideoFrames.PACKET) {
            assertEquals(0x47, f[at] & 0xFF, "sync byte of packet at " + at);
        }
        assertEquals(0x40, f[5] & 0x40, "a keyframe's first packet is a random-access point");
        assertEquals(0, VideoFrames.frame(new Label(7, 2, 61))[3] & 0x20, "others carry no adaptation field");
        assertEquals(l, VideoFrames.read(f));
        assertEquals(l, VideoFrames.read(Arrays.copyOfRange(f, 3 * VideoFrames.PACKET, f.length)), "a late viewer's cut frame");
        f[1000] ^= 1;
        assertNull(VideoFrames.read(f), "one bit changed");
        assertNull(VideoFrames.read(Arrays.copyOf(VideoFrames.frame(l), 500)), "not whole packets");
    }

    @Test
    void aDataTextCarriesItsLabelAndReadsBackOnlyWhole() {
        Label l = new Label(41, 3, 12345);
        String t = DataTexts.text(l);
        assertEquals(DataTexts.SIZE, t.getBytes(StandardCharsets.UTF_8).length);
        assertEquals(l, DataTexts.read(t));
        assertNull(DataTexts.read(t.replace("\"n\":12345", "\"n\":12346")), "another number, the same padding");
        assertNull(DataTexts.read(t.substring(0, 100)));
    }

    @Test
    void aSkippedNumberIsMissingOncePerNodeHoweverManyReceiversThereMissIt() {
        Ledger ledger = new Ledger();
        LiveTracker a = new LiveTracker(ledger, ledger.video, 0);
        LiveTracker b = new LiveTracker(ledger, ledger.video, 0);
        LiveTracker c = new LiveTracker(ledger, ledger.video, 1);
        for (LiveTracker t : new LiveTracker[] {a, b, c}) {
            for (long seq : new long[] {0, 1, 4, 5}) {
                t.message(VideoFrames.frame(new Label(1, 1, seq)), false);
            }
        }
        assertEquals(12, ledger.video.received.get());
        assertEquals(4, ledger.video.missing.get(), "2 and 3, on node 0 and on node 1");
        assertEquals(0, ledger.video.disorder.get());
    }

    @Test
    void orderHoldsPerPublisherConnectionOnly() {
        Ledger ledger = new Ledger();
        LiveTracker t = new LiveTracker(ledger, ledger.data, 0);
        send(t, new Label(3, 1, 0), new Label(3, 1, 1), new Label(3, 2, 0), new Label(3, 2, 1));
        assertEquals(0, ledger.data.missing.get(), "numbering restarts with the publisher's connection");
        send(t, new Label(3, 1, 2), new Label(3, 1, 4));
        assertEquals(0, ledger.data.disorder.get(), "the old connection's last messages, late by another path");
        assertEquals(1, ledger.data.missing.get(), "but a hole in them is one");
        send(t, new Label(3, 2, 1), new Label(3, 2, 0));
        assertEquals(2, ledger.data.disorder.get(), "a message twice, and one older than the last");
        t.message("{}".getBytes(StandardCharsets.UTF_8), true);
        t.message(VideoFrames.frame(new Label(3, 2, 2)), false);
        assertEquals(2, ledger.data.corrupt.get(), "not a data text, or not text");
    }

    private static void send(LiveTracker t, Label... labels) {
        for (Label l : labels) {
            t.message(DataTexts.text(l).getBytes(StandardCharsets.UTF_8), true);
        }
    }
}
