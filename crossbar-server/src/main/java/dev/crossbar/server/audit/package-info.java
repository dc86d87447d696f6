/**
 * The audit trail ({@code --audit-log}): who connected where, who was refused or cut off and why,
 * what the administrator did; and the one rule for how much of a client's address may be shown.
 * A leaf: every part of the relay that has something to record reaches it, it reaches none.
 */
package dev.crossbar.server.audit;
