package dev.crossbar.server.stats;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The recent past of each topic for the page's charts: message rate in and payload bytes out per
 * second at each of the last {@link #POINTS} stats ticks. Sent once, in the first snapshot a socket
 * gets, so a page just opened draws the last minutes at once; it appends every later update itself.
 *
 * <p>Bounded: {@link #POINTS} floats twice per topic, at most {@link #MAX_TOPICS} topics (about 5 MB
 * at the bound); a topic's trend goes when the topic does. Confined to the stats thread.
 */
final class TopicTrends {

    /** Points per chart: 5 minutes at the default 5 s interval. */
    static final int POINTS = 60;
    /** Topics followed at once; more than any node's --max-topics default, and a cluster's distinct topics. */
    static final int MAX_TOPICS = 20_000;

    /**
     * One topic's trend, oldest point first.
     *
     * @param rateIn messages per second into the topic
     * @param bytesOut payload bytes per second out of it
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Trend(float[] rateIn, float[] bytesOut) {
    }

    private static final class Ring {
        final float[] rateIn = new float[POINTS];
        final float[] bytesOut = new float[POINTS];
        int next;
        int size;

        void add(double in, double out) {
            rateIn[next] = (float) in;
            bytesOut[next] = (float) out;
            next = (next + 1) % POINTS;
            size = Math.min(size + 1, POINTS);
        }

        Trend trend() {
            float[] in = new float[size];
            float[] out = new float[size];
            int first = (next - size + POINTS) % POINTS;
            for (int i = 0; i < size; i++) {
                in[i] = rateIn[(first + i) % POINTS];
                out[i] = bytesOut[(first + i) % POINTS];
            }
            return new Trend(in, out);
        }
    }

    private final Map<String, Ring> rings = new LinkedHashMap<>();

    /** The key the page uses too: schema and display name. */
    static String key(String schema, String topic) {
        return schema + " " + topic;
    }

    /** One tick: a point for every live topic; topics gone are forgotten. */
    void record(Iterable<Point> topics) {
        Set<String> live = new HashSet<>();
        for (Point p : topics) {
            String key = key(p.schema(), p.topic());
            live.add(key);
            Ring r = rings.get(key);
            if (r == null) {
                if (rings.size() >= MAX_TOPICS) {
                    continue;
                }
                r = new Ring();
                rings.put(key, r);
            }
            r.add(p.rateIn(), p.bytesOut());
        }
        rings.keySet().retainAll(live);
    }

    /** Every followed topic's trend, by {@link #key}. */
    Map<String, Trend> trends() {
        Map<String, Trend> out = new LinkedHashMap<>();
        rings.forEach((k, r) -> out.put(k, r.trend()));
        return out;
    }

    /** What a tick records of a topic. */
    record Point(String schema, String topic, double rateIn, double bytesOut) {

        static Point of(ClusterSnapshot.ClusterTopic t) {
            return new Point(t.schema(), t.topic(), t.in().rate(), t.out().byteRate());
        }
    }
}
