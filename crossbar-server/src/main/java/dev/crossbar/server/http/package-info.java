/**
 * HTTP: requests before the upgrade, reserved endpoints, the gate every upgrade passes, and the
 * one that takes HTTP ingest ({@code POST}/{@code PUT} on {@code /in/<t>}) off the WebSocket path.
 */
package dev.crossbar.server.http;
