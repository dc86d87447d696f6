package dev.crossbar.core.topic;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.broker.Broker;
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
 *
 * <p>The {@link Broker} hears when a topic gains its first receiver and loses its last one, from
 * inside the same per-key lock, so for one topic those calls alternate in the order the changes
 * happened, and a node is subscribed exactly while it has someone to deliver to.
 */
public final class TopicRegistry {

    private final ConcurrentHashMap<TopicKey, Topic> topics = new ConcurrentHashMap<>();
    private final Broker broker;

    /** A registry whose interest changes go to {@code broker}. */
    public TopicRegistry(Broker broker) {
        this.broker = requireNonNull(broker, "broker");
    }

    /** A registry for one node on its own ({@link Broker#LOCAL}). */
    public TopicRegistry() {
        this(Broker.LOCAL);
    }

    /** Adds the member to its route's topic and returns that topic. */
    public Topic join(Member member) {
        requireNonNull(member, "member");
        Topic[] joined = new Topic[1];
        topics.compute(member.route().topic(), (key, topic) -> {
            Topic t = topic != null ? topic : new Topic(key);
            boolean hadReceivers = t.hasReceivers();
            t.add(member);
            if (!hadReceivers && t.hasReceivers()) {
                broker.interest(key);
            }
            joined[0] = t;
            return t;
        });
        return joined[0];
    }

    /** Removes the member; the topic goes with its last member. Safe to call more than once. */
    public void leave(Member member) {
        requireNonNull(member, "member");
        topics.computeIfPresent(member.route().topic(), (key, topic) -> {
            boolean hadReceivers = topic.hasReceivers();
            boolean empty = topic.remove(member);
            if (hadReceivers && !topic.hasReceivers()) {
                broker.noInterest(key);
            }
            return empty ? null : topic;
        });
    }

    /** Where interest changes go; the router publishes through the same broker. */
    public Broker broker() {
        return broker;
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
