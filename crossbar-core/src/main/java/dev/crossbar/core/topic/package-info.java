/**
 * Topics: who is on which stream, grouped by event loop, and the {@link dev.crossbar.core.topic.Router}
 * that hands each message to its topic's fan-out.
 */
package dev.crossbar.core.topic;
