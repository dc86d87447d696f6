/**
 * The relay's log: level and format (text, or one JSON object per line) set from the configuration
 * and changed on reload, over Logback; repeated lines rate-limited, with a count of what was held back.
 */
package dev.crossbar.server.logging;
