/** Topics: who is on which stream, grouped by event loop for fan-out. */
package dev.crossbar.core.topic;
