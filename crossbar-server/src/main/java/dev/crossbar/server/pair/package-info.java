/**
 * 1:1 sessions ({@code schema=session} streams): a host waits on {@code /in/<t>}; each client on
 * {@code /out/<t>} is offered to one host, which opens {@code /session/<id>}, and the two connections
 * are piped to each other, frame for frame, with back-pressure. See {@code docs/protocol.md}.
 */
package dev.crossbar.server.pair;
