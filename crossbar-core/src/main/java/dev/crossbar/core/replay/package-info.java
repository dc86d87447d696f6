/**
 * What a topic remembers for members that join later: each publisher's last message
 * ({@code start=last}), or the messages since its stream's last keyframe ({@code start=keyframe}).
 * Used by {@code topic} under the topic's monitor, so a newcomer gets each message either in its
 * replay or live, never both and never neither.
 */
package dev.crossbar.core.replay;
