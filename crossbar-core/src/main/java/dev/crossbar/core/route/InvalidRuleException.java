package dev.crossbar.core.route;

/** A routing rule that cannot be used; the message names where it came from and what is wrong. */
public final class InvalidRuleException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public InvalidRuleException(String reason) {
        super(reason);
    }
}
