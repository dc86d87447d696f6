/**
 * Access control: JSON Web Tokens that grant read and/or write on one route until they expire.
 *
 * <p>A token is checked before the WebSocket upgrade ({@link dev.crossbar.server.auth.AuthGate},
 * 401/403 with a reason), or, in the original crossbar's compatibility mode, as the first message
 * after it ({@link dev.crossbar.server.auth.FirstMessageAuth}). Once connected, a
 * {@link dev.crossbar.server.auth.Permit} says what the connection may do and the
 * {@link dev.crossbar.server.auth.AccessEnforcer} ends it (1008) when the token expires or is
 * revoked. An HTTP ingest request is checked the same way, before its body is published
 * ({@link dev.crossbar.server.auth.IngestAccess}: 401/403, and 401 when the token ends mid-body).
 * The claims are documented in {@code docs/protocol.md}, the flags in
 * {@code docs/operations.md}.
 */
package dev.crossbar.server.auth;
