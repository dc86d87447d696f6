package dev.crossbar.core.schema;

/** 1:N: publishers ({@code /in/t}) reach subscribers ({@code /out/t}); subscribers' sends are dropped. */
public final class OneToMany implements Schema {

    public static final OneToMany INSTANCE = new OneToMany();

    private OneToMany() {
    }

    @Override
    public String name() {
        return "1:n";
    }

    @Override
    public boolean canSend(Role role) {
        return role == Role.PUBLISHER;
    }

    @Override
    public boolean canReceive(Role role) {
        return role == Role.SUBSCRIBER;
    }

    @Override
    public String toString() {
        return name();
    }
}
