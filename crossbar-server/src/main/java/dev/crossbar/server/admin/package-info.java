/**
 * The administrator's actions over HTTP ({@code POST /admin/...}): reloading the configuration,
 * draining the node before a restart. Each needs the admin scope when tokens are on, and comes
 * from this host when they are off.
 */
package dev.crossbar.server.admin;
