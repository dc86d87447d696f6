package dev.crossbar.server.cluster;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.auth.Revocation;
import dev.crossbar.server.auth.RevocationStore;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.testing.NatsCluster;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import io.nats.client.Nats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The revocation bucket on Debian's nats-server (2.9, which cannot expire one entry by itself):
 * each entry keeps its own expiry, a later revocation of the same id keeps the later expiry, and
 * the nodes' purge removes what has expired and nothing else.
 */
class NatsAdminLinkIT {

    @TempDir
    Path dir;

    @Test
    void entriesKeepTheirOwnExpiryAndThePurgeRemovesOnlyTheExpired() throws Exception {
        try (NatsCluster nats = NatsCluster.start(dir, 1, true)) {
            NatsConfig config = NatsConfig.builder().servers(nats.url(0)).build();
            Set<Revocation> heard = ConcurrentHashMap.newKeySet();
            try (NatsAdminLink link = new NatsAdminLink(config, "node-a", RevocationStore.MEMORY, true);
                 Connection c = Nats.connect(nats.url(0))) {
                link.start(heard::add);
                long now = System.currentTimeMillis();
                link.save(new Revocation("short", null, now + 1500));
                link.save(new Revocation("long", "booking-7", now + 3_600_000));
                // The same id again with an earlier expiry: the later one is kept.
                link.save(new Revocation("long", null, now + 60_000));
                assertEquals("JetStream bucket " + NatsAdminLink.BUCKET, link.describe());
                KeyValue kv = c.keyValue(NatsAdminLink.BUCKET);
                assertEquals(Set.of("jti." + NatsAdminLink.key("short"), "jti." + NatsAdminLink.key("long"),
                        "sid." + NatsAdminLink.key("booking-7")), Set.copyOf(kv.keys()));
                assertEquals(now + 3_600_000, NatsAdminLink.parse(kv.get("jti." + NatsAdminLink.key("long")).getValue())
                        .untilMillis());
                await("the watch hands every revocation on", Duration.ofSeconds(5), () -> heard.size() >= 3);

                Thread.sleep(Math.max(0, now + 1600 - System.currentTimeMillis()));
                link.purgeExpired();
                assertEquals(Set.of("jti." + NatsAdminLink.key("long"), "sid." + NatsAdminLink.key("booking-7")),
                        Set.copyOf(kv.keys()));
                // A node that starts now hears only what is in force.
                Set<Revocation> later = ConcurrentHashMap.newKeySet();
                try (NatsAdminLink second = new NatsAdminLink(config, "node-b", RevocationStore.MEMORY, true)) {
                    second.start(later::add);
                    await("the second node read the bucket", Duration.ofSeconds(5), () -> later.size() == 2);
                    assertTrue(later.stream().noneMatch(r -> "short".equals(r.jti())), later.toString());
                    List<String> ids = later.stream().map(r -> r.jti() != null ? r.jti() : r.sid()).sorted().toList();
                    assertEquals(List.of("booking-7", "long"), ids);
                }
            }
        }
    }
}
