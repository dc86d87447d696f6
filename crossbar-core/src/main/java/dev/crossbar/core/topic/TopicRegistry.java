package dev.crossbar.core.topic;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.stats.DepartedTraffic;
import java.util.Collection;
import java.util.Collections;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The live topics. A topic exists while it has members: the first join creates it, the last leave
 * removes it, so churn never grows the registry.
 *
 * <p>Join and leave run inside {@link ConcurrentHashMap#compute}, which locks the one key, so a
 * join racing the last leave either lands in the old topic before it is removed or creates a new
 * one after: never in a removed topic.
 */
public final class TopicRegistry {

    private final ConcurrentHashMap<TopicKey, Topic> topics = new ConcurrentHashMap<>();
    private final DepartedTraffic departed = new DepartedTraffic();

    /** Adds the member to its route's topic and returns that topic. */
    public Topic join(Member member) {
        requireNonNull(member, "member");
        Topic[] joined = new Topic[1];
        topics.compute(member.route().topic(), (key, topic) -> {
            Topic t = topic != null ? topic : new Topic(key);
            t.add(member);
            joined[0] = t;
            return t;
        });
        return joined[0];
    }

    /** Removes the member; the topic goes with its last member. Safe to call more than once. */
    public void leave(Member member) {
        requireNonNull(member, "member");
        topics.computeIfPresent(member.route().topic(), (key, topic) -> {
            // Under this key's lock, so a member is counted as departed exactly once.
            if (topic.contains(member)) {
                departed.add(member.route(), member.stats());
            }
            return topic.remove(member) ? null : topic;
        });
    }

    /** What members that have left counted, so relay-wide totals survive their topics. */
    public DepartedTraffic departed() {
        return departed;
    }

    public Topic get(TopicKey key) {
        return topics.get(key);
    }

    public int size() {
        return topics.size();
    }

    public Collection<Topic> topics() {
        return Collections.unmodifiableCollection(topics.values());
    }
}
