/** HTTP: requests before the upgrade, reserved endpoints, and the gate every upgrade passes. */
package dev.crossbar.server.http;
