package dev.crossbar.bench.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The soak's clients (see {@link Soak}): who connects where, how often each sends, who leaves and
 * comes back, and the file every minute.
 */
final class Traffic {

    static final long VIDEO_EVERY_MICROS = 33_333;
    static final long DATA_EVERY_MILLIS = 100;
    static final int FILE_MESSAGE = 1024 * 1024;
    /** When the first file starts; then one a minute. */
    static final long FIRST_FILE_SECONDS = 30;
    /** What a stalled viewer reads before it stops reading. */
    static final int STALLED_READS = 5;

    private final Soak.Cluster cluster;
    private final int cameras;
    private final int viewers;
    private final int topics;
    private final int fileMib;
    private final ScheduledExecutorService senders = Executors.newScheduledThreadPool(4, Soak.daemons("soak-sender"));
    private final List<Member> cameraViewers = new ArrayList<>();
    private final List<Member> dataMembers = new ArrayList<>();
    private final SplittableRandom random = new SplittableRandom(47);
    private final byte[] block = new byte[FILE_MESSAGE];
    private int files;

    Traffic(Soak.Cluster cluster, int cameras, int viewers, int topics, int fileMib) {
        this.cluster = cluster;
        this.cameras = cameras;
        this.viewers = viewers;
        this.topics = topics;
        this.fileMib = fileMib;
        new SplittableRandom(7).nextBytes(block);
    }

    void start() {
        Ledger ledger = cluster.ledger();
        List<Member> all = new ArrayList<>();
        List<Runnable> sending = new ArrayList<>();
        for (int i = 0; i <= cameras; i++) {
            boolean stalled = i == cameras; // one more camera, whose one viewer stops reading
            String name = stalled ? "stalled" : "c" + i;
            Member publisher = new Member("camera", i, cluster, i % 2, "/in/cam/" + name, null, Long.MAX_VALUE, false);
            all.add(publisher);
            sending.add(() -> publisher.sendVideo(ledger.video));
            for (int j = 0; j < (stalled ? 1 : viewers); j++) {
                Member viewer = new Member(stalled ? "stalled viewer" : "viewer", i, cluster, (i + j + 1) % 2,
                        "/out/cam/" + name, node -> new LiveTracker(ledger, ledger.video, node),
                        stalled ? STALLED_READS : Long.MAX_VALUE, true);
                all.add(viewer);
                if (!stalled) {
                    cameraViewers.add(viewer);
                }
            }
        }
        for (Member m : all) {
            m.connect();
        }
        long videoOffset = VIDEO_EVERY_MICROS / sending.size();
        for (int i = 0; i < sending.size(); i++) {
            senders.scheduleAtFixedRate(sending.get(i), i * videoOffset, VIDEO_EVERY_MICROS, TimeUnit.MICROSECONDS);
        }
        for (int t = 0; t < topics; t++) {
            for (int side = 0; side < 2; side++) {
                Member m = new Member("data member", 2 * t + side, cluster, side, "/lab/d" + t,
                        node -> new LiveTracker(ledger, ledger.data, node), Long.MAX_VALUE, false);
                m.connect();
                dataMembers.add(m);
                senders.scheduleAtFixedRate(() -> m.sendData(ledger.data),
                        (2 * t + side) * DATA_EVERY_MILLIS * 1000 / (2L * topics), DATA_EVERY_MILLIS * 1000, TimeUnit.MICROSECONDS);
            }
        }
        // Clients leave and come back: a viewer every 10 s, a data member every 30 s, on the other node.
        senders.scheduleWithFixedDelay(() -> churn(cameraViewers), 10, 10, TimeUnit.SECONDS);
        senders.scheduleWithFixedDelay(() -> churn(dataMembers), 30, 30, TimeUnit.SECONDS);
        senders.scheduleAtFixedRate(this::file, FIRST_FILE_SECONDS, 60, TimeUnit.SECONDS);
    }

    private void churn(List<Member> members) {
        Member m = members.get(random.nextInt(members.size()));
        m.leaveAndReturn(random.nextInt(2));
    }

    private void file() {
        Thread t = new Thread(new FileTransfer(cluster, files++, fileMib, block), "soak-file");
        t.setDaemon(true);
        t.start();
    }

    void stop() {
        senders.shutdownNow();
    }
}
