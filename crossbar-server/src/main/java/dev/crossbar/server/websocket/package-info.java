/**
 * What every WebSocket connection has once upgraded, whatever serves it (a relay session, the
 * statistics socket): its close codes, and its lifecycle (keepalive, closing handshake). Depends on
 * no other server package, so {@code session}, {@code auth} and {@code stats} can all use it.
 */
package dev.crossbar.server.websocket;
