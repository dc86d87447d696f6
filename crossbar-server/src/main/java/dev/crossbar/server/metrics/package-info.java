/**
 * Metrics for machines: Micrometer meters in the Prometheus text format at {@code /metrics}. Every
 * meter reads live state when scraped; nothing here is on the message path, and every tag is from a
 * closed set (schema, role, refusal reason), never a topic or client id.
 */
package dev.crossbar.server.metrics;
