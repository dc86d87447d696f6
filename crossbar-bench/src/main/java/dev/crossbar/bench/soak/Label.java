package dev.crossbar.bench.soak;

/**
 * Which message a live client got: its stream's number, the publisher's connection (a new one after
 * each reconnect, so a receiver never calls the restart of numbering a hole) and its number there.
 */
record Label(int stream, int epoch, long seq) {
}
