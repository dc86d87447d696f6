package dev.crossbar.core.topic;

/** Joining would create a topic beyond the registry's limit. */
public final class TopicLimitException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public TopicLimitException(int maxTopics) {
        super("topic limit reached (" + maxTopics + " live topics)");
    }
}
