package dev.crossbar.server.auth;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.Tokens;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The original crossbar's way: upgrade without a token, send it as the first message, get a JSON
 * answer before any relayed data (or 1008 with the reason). Tokens in the request still work, and
 * are still checked before the upgrade.
 */
class FirstMessageAuthIT {

    private static final Duration QUIET = Duration.ofMillis(300);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .handshakeTimeout(Duration.ofSeconds(2))
            .auth(AuthConfig.builder()
                    .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
                    .audience(Tokens.AUDIENCE)
                    .firstMessage(true)
                    .build()));

    private int members() {
        return relay.server().topics().topics().stream().mapToInt(t -> t.members().length).sum();
    }

    @Test
    void theFirstMessageIsTheTokenAndItsAnswerComesBeforeAnyRelayedData() throws Exception {
        String subToken = Tokens.hs256("/out/cam", "read");
        try (JdkClient pub = JdkClient.connectWithToken(relay.ws("/in/cam"), Tokens.hs256("/in/cam", "write"));
             JdkClient sub = JdkClient.connect(relay.ws("/out/cam"))) {
            await("publisher joined", Duration.ofSeconds(5), () -> members() == 1);
            pub.sendText("before the subscriber is authorised");
            // Not a member yet, so it gets nothing of the stream.
            assertNull(sub.poll(QUIET));
            assertEquals(1, members());

            sub.sendText(subToken);
            assertEquals("{\"topic\":\"/out/cam\",\"authorised\":true,\"reason\":\"ok\"}", sub.take().string());
            await("subscriber joined", Duration.ofSeconds(5), () -> members() == 2);
            pub.sendText("after");
            assertEquals("after", sub.take().string());
            assertNull(sub.poll(QUIET));
        }
    }

    @Test
    void aPublishersTokenMessageIsNotRelayedButWhatFollowsIs() throws Exception {
        // The original's tokens: aud = audience + route, no topic or scope claims.
        String original = Tokens.hs256(null, null, b -> b.audience(Tokens.AUDIENCE + "/in/cam"));
        try (JdkClient sub = JdkClient.connectWithToken(relay.ws("/out/cam"), Tokens.hs256("/out/cam", "read"));
             NettyClient pub = NettyClient.connect(relay.ws("/in/cam"))) {
            pub.sendText(original + "\n"); // surrounding white space is ignored, as by the original
            assertEquals("{\"topic\":\"/in/cam\",\"authorised\":true,\"reason\":\"ok\"}", pub.take().string());
            await("both joined", Duration.ofSeconds(5), () -> members() == 2);
            pub.sendBinary(new byte[] {42});
            assertEquals(42, sub.take().data()[0]);
            assertNull(sub.poll(QUIET), "the token itself must not be relayed");
        }
    }

    @Test
    void aRefusedTokenIsAnsweredThenClosedWith1008() {
        // Minted before connecting: the clock for sending it starts at the upgrade.
        String wrongSecret = Tokens.hs256WithSecret(Tokens.claims("/out/cam", "read").build(), "wrong-secret-0123456789abcdefghij");
        String otherRoute = Tokens.hs256("/in/cam", "write");
        try (JdkClient bad = JdkClient.connect(relay.ws("/out/cam"));
             JdkClient wrongRoute = JdkClient.connect(relay.ws("/out/cam"))) {
            bad.sendText(wrongSecret);
            assertEquals("{\"topic\":\"/out/cam\",\"authorised\":false,\"reason\":\"bad signature\"}", bad.take().string());
            assertEquals(1008, bad.awaitClose(Duration.ofSeconds(2)));
            assertEquals("bad signature", bad.closeReason.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join());

            wrongRoute.sendText(otherRoute);
            assertEquals("{\"topic\":\"/out/cam\",\"authorised\":false,\"reason\":\"token is for /in/cam, not /out/cam\"}",
                    wrongRoute.take().string());
            assertEquals(1008, wrongRoute.awaitClose(Duration.ofSeconds(2)));
            assertEquals(0, members());
        }
    }

    @Test
    void noTokenWithinTheHandshakeTimeoutCloses1008() {
        try (JdkClient silent = JdkClient.connect(relay.ws("/out/cam"))) {
            assertEquals("{\"topic\":\"/out/cam\",\"authorised\":false,\"reason\":\"no token within 2000 ms\"}",
                    silent.take(Duration.ofSeconds(3)).string());
            assertEquals(1008, silent.awaitClose(Duration.ofSeconds(2)));
            assertEquals("no token within 2000 ms", silent.closeReason.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join());
        }
    }

    @Test
    void aTokenInTheRequestIsStillCheckedBeforeTheUpgrade() throws Exception {
        String refused = HttpExchange.upgrade(relay.port(), "/out/cam", Map.of("Authorization", "Bearer garbage"));
        assertTrue(refused.startsWith("HTTP/1.1 401 Unauthorized"), refused);
        assertFalse(refused.contains("101"), refused);
        try (JdkClient ok = JdkClient.connectWithToken(relay.ws("/out/cam"), Tokens.hs256("/out/cam", "read"))) {
            await("joined", Duration.ofSeconds(5), () -> members() == 1);
            assertNull(ok.poll(QUIET), "no JSON answer when the token came with the request");
        }
    }
}
