package dev.crossbar.core.schema;

/** Bidirectional N:N: each message goes to every other member of the topic. */
public final class ManyToMany implements Schema {

    public static final ManyToMany INSTANCE = new ManyToMany();

    private ManyToMany() {
    }

    @Override
    public String name() {
        return "n:n";
    }

    @Override
    public boolean canSend(Role role) {
        return role == Role.MEMBER;
    }

    @Override
    public boolean canReceive(Role role) {
        return role == Role.MEMBER;
    }

    @Override
    public String toString() {
        return name();
    }
}
