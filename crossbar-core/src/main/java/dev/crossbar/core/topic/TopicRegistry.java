package dev.crossbar.core.topic;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.replay.ReplayLimits;
import dev.crossbar.core.replay.Replayed;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.StreamRule;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.stats.DepartedTraffic;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
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
 *
 * <p>A new topic's options come from the {@link RoutingTable}, looked up once, when it is created.
 */
public final class TopicRegistry {

    /** Default bound on live topics; see {@link #TopicRegistry(int, Broker)}. */
    public static final int DEFAULT_MAX_TOPICS = 10_000;

    private final ConcurrentHashMap<TopicKey, Topic> topics = new ConcurrentHashMap<>();
    private final DepartedTraffic departed = new DepartedTraffic();
    /** Changed by a configuration reload ({@link #reconfigure}). */
    private volatile int maxTopics;
    private final Broker broker;
    /** Rules for topics created from now on; a live topic keeps the options it was created with. */
    private volatile RoutingTable routing;
    private final ReplayLimits replayLimits;

    /** One member's join: its topic, and what it gets before the live messages (caller releases). */
    public record Joined(Topic topic, List<Replayed> replay) {
    }

    /**
     * A registry that refuses to create more than {@code maxTopics} topics at once, tells
     * {@code broker} about interest changes and gives each new topic the options of its rule.
     */
    public TopicRegistry(int maxTopics, Broker broker, RoutingTable routing, ReplayLimits replayLimits) {
        if (maxTopics <= 0) {
            throw new IllegalArgumentException("maxTopics: " + maxTopics + " (expected: > 0)");
        }
        this.maxTopics = maxTopics;
        this.broker = requireNonNull(broker, "broker");
        this.routing = requireNonNull(routing, "routing");
        this.replayLimits = requireNonNull(replayLimits, "replayLimits");
    }

    /** With no routing rules: every topic live-only, as before there were rules. */
    public TopicRegistry(int maxTopics, Broker broker) {
        this(maxTopics, broker, RoutingTable.EMPTY, ReplayLimits.DEFAULT);
    }

    /** A registry for one node on its own ({@link Broker#LOCAL}). */
    public TopicRegistry(int maxTopics) {
        this(maxTopics, Broker.LOCAL);
    }

    /** A registry whose interest changes go to {@code broker}, with the default topic limit. */
    public TopicRegistry(Broker broker) {
        this(DEFAULT_MAX_TOPICS, broker);
    }

    public TopicRegistry() {
        this(DEFAULT_MAX_TOPICS, Broker.LOCAL);
    }

    /**
     * New limits and rules, for topics created from now on: a live topic keeps the rule it was
     * created with until it is empty, and topics over a lower limit stay until their members leave.
     */
    public void reconfigure(int maxTopics, RoutingTable routing) {
        if (maxTopics <= 0) {
            throw new IllegalArgumentException("maxTopics: " + maxTopics + " (expected: > 0)");
        }
        this.routing = requireNonNull(routing, "routing");
        this.maxTopics = maxTopics;
    }

    public int maxTopics() {
        return maxTopics;
    }

    /** Whether a member of {@code key} could join now without exceeding the topic limit. */
    public boolean admits(TopicKey key) {
        return topics.size() < maxTopics || topics.containsKey(key);
    }

    public RoutingTable routing() {
        return routing;
    }

    /**
     * Adds the member to its route's topic and returns that topic with the member's replay.
     *
     * @throws TopicLimitException if the topic does not exist and the registry is full
     */
    public Joined join(Member member) {
        requireNonNull(member, "member");
        Joined[] joined = new Joined[1];
        topics.compute(member.route().topic(), (key, topic) -> {
            if (topic == null && topics.size() >= maxTopics) {
                throw new TopicLimitException(maxTopics);
            }
            Topic t = topic != null ? topic : newTopic(key);
            boolean hadReceivers = t.hasReceivers();
            boolean hadSenders = t.hasSenders();
            List<Replayed> replay = t.add(member);
            if (!hadReceivers && t.hasReceivers()) {
                broker.interest(key, t.holdBack() != null);
            }
            if (t.holdBack() != null && !hadSenders && t.hasSenders()) {
                broker.holdInterest(key, true);
            }
            joined[0] = new Joined(t, replay);
            return t;
        });
        return joined[0];
    }

    private Topic newTopic(TopicKey key) {
        StreamRule rule = routing.ruleFor(key);
        if (rule == null) {
            return new Topic(key);
        }
        return new Topic(key, rule, rule.options(), replayLimits.memoryFor(rule.options()), broker);
    }

    /** Removes the member; the topic goes with its last member. Safe to call more than once. */
    public void leave(Member member) {
        requireNonNull(member, "member");
        topics.computeIfPresent(member.route().topic(), (key, topic) -> {
            // Under this key's lock, so a member is counted as departed exactly once.
            if (topic.contains(member)) {
                departed.add(member.route(), member.stats());
            }
            boolean hadReceivers = topic.hasReceivers();
            boolean hadSenders = topic.hasSenders();
            boolean empty = topic.remove(member);
            if (hadReceivers && !topic.hasReceivers()) {
                broker.noInterest(key);
            }
            if (topic.holdBack() != null && hadSenders && !topic.hasSenders()) {
                broker.holdInterest(key, false);
            }
            return empty ? null : topic;
        });
    }

    /** What members that have left counted, so relay-wide totals survive their topics. */
    public DepartedTraffic departed() {
        return departed;
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
