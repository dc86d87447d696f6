/**
 * The seam between one node and the others: a {@link dev.crossbar.core.broker.Broker} is told which
 * topics this node has receivers on and carries each message to the other nodes once; messages from
 * other nodes come back through {@link dev.crossbar.core.broker.RemoteDelivery}. The default,
 * {@link dev.crossbar.core.broker.Broker#LOCAL}, is one node and nothing else.
 */
package dev.crossbar.core.broker;
