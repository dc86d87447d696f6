/**
 * Sessions: a WebSocket connection from upgrade to close, as a member of its topic; and an HTTP
 * ingest request ({@code POST /in/<t>}) from its head to the end of its body, as the publisher of
 * its stream ({@link dev.crossbar.server.session.IngestSession}).
 */
package dev.crossbar.server.session;
