/** Routes: from a URL path to a topic, a schema and a role. */
package dev.crossbar.core.route;
