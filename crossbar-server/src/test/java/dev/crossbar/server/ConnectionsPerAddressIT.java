package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One address over its share gets 429; the total limit is separate (503, in HostileInputIT). */
class ConnectionsPerAddressIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.maxConnectionsPerAddress(3));

    @Test
    void fourthConnectionFromOneAddressGets429() throws Exception {
        List<RawClient> held = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RawClient c = new RawClient(relay.port());
                held.add(c);
                assertTrue(c.upgrade("/room").startsWith("HTTP/1.1 101"));
            }
            try (RawClient over = new RawClient(relay.port())) {
                String head = over.upgrade("/room");
                assertTrue(head.startsWith("HTTP/1.1 429"), head);
            }
            held.remove(0).close();
            RelayServerExtension.await("slot freed", java.time.Duration.ofSeconds(5),
                    () -> relay.server().openConnections() == 2);
            try (RawClient again = new RawClient(relay.port())) {
                assertTrue(again.upgrade("/room").startsWith("HTTP/1.1 101"));
            }
        } finally {
            for (RawClient c : held) {
                c.close();
            }
        }
    }
}
