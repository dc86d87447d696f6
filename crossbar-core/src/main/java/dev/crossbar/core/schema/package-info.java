/** Streaming schemas: the strategies that decide who in a topic sends and who receives. */
package dev.crossbar.core.schema;
