/** Transport: the event loops, the listening socket and the pipeline each connection gets. */
package dev.crossbar.server.transport;
