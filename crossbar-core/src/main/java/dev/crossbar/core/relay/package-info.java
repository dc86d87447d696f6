/** Fan-out: one message, framed once, written by each receiver's own event loop. */
package dev.crossbar.core.relay;
