/** Sessions: a WebSocket connection from upgrade to close, as a member of its topic. */
package dev.crossbar.server.session;
