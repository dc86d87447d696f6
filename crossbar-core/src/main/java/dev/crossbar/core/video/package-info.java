/**
 * Live video streams relayed as MPEG-TS (cameras feeding the jsmpeg player): finding the packets
 * where a viewer can start decoding ({@link dev.crossbar.core.video.RandomAccessTracker}) and
 * keeping the bytes since the latest one for a viewer who joins mid-stream
 * ({@link dev.crossbar.core.video.GopBuffer}). Knows nothing of topics or sessions.
 */
package dev.crossbar.core.video;
