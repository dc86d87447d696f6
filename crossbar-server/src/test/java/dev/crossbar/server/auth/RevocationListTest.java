package dev.crossbar.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The revocation list's bound: entries expire with their token, and a full list refuses rather than forgets. */
class RevocationListTest {

    @Test
    void entriesLastUntilTheirTokenWouldHaveExpired() {
        RevocationList list = new RevocationList(10);
        assertTrue(list.revoke("j1", null, 2_000, 1_000));
        assertTrue(list.revoke(null, "s1", 5_000, 1_000));
        assertTrue(list.isRevoked("j1", null, 1_999));
        assertTrue(list.isRevoked("other", "s1", 4_999));
        assertFalse(list.isRevoked("j2", "s2", 1_500));
        assertFalse(list.isRevoked("j1", null, 2_000), "expired with the token");
        assertEquals(1, list.size(), "an expired entry found on lookup is dropped");
    }

    @Test
    void aFullListPurgesExpiredEntriesAndOtherwiseRefuses() {
        RevocationList list = new RevocationList(2);
        assertTrue(list.revoke("a", "b", 2_000, 1_000));
        assertFalse(list.revoke("c", null, 9_000, 1_500), "full of unexpired entries");
        assertTrue(list.isRevoked("a", null, 1_500), "nothing was forgotten to make room");
        assertTrue(list.revoke("c", null, 9_000, 2_500), "room once the earlier entries expired");
        assertEquals(1, list.size());
        assertThrows(IllegalArgumentException.class, () -> list.revoke(null, null, 1, 0));
    }
}
