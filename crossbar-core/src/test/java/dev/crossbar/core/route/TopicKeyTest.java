package dev.crossbar.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.crossbar.core.schema.ManyToMany;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.schema.Role;
import dev.crossbar.core.stats.DepartedTraffic;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The keys topics and departed totals are found by, whose equals and hashCode are written by hand
 * (see {@link TopicKey}): equal by value, as a record's would be, and never across schemas.
 */
class TopicKeyTest {

    @Test
    void topicKeysAreEqualByValueAndNeverAcrossSchemas() {
        TopicKey cam = new TopicKey(OneToMany.INSTANCE, "cam");
        TopicKey same = new TopicKey(OneToMany.INSTANCE, new String("cam"));
        assertEquals(cam, same);
        assertEquals(cam.hashCode(), same.hashCode());
        assertNotEquals(cam, new TopicKey(ManyToMany.INSTANCE, "cam"));
        assertNotEquals(cam, new TopicKey(OneToMany.INSTANCE, "cam2"));
        assertNotEquals(cam, "1:n cam");

        Map<TopicKey, String> topics = new HashMap<>();
        topics.put(cam, "stream");
        topics.put(new TopicKey(ManyToMany.INSTANCE, "cam"), "data");
        assertEquals("stream", topics.get(same));
        assertEquals(2, topics.size());
    }

    @Test
    void departedKindsAreEqualByValue() {
        DepartedTraffic.Kind subscribers = new DepartedTraffic.Kind("1:n", Role.SUBSCRIBER);
        assertEquals(subscribers, new DepartedTraffic.Kind(new String("1:n"), Role.SUBSCRIBER));
        assertEquals(subscribers.hashCode(), new DepartedTraffic.Kind("1:n", Role.SUBSCRIBER).hashCode());
        assertNotEquals(subscribers, new DepartedTraffic.Kind("1:n", Role.PUBLISHER));
        assertNotEquals(subscribers, new DepartedTraffic.Kind("n:n", Role.SUBSCRIBER));
        assertEquals(new DepartedTraffic.Kind(null, null), new DepartedTraffic.Kind(null, null));
    }
}
