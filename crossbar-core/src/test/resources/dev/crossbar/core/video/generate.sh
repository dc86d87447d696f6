#!/bin/sh
# Regenerates the MPEG-TS fixtures of RandomAccessTrackerTest and their oracle, the byte positions
# of the keyframe packets as ffprobe reports them (independent of Crossbar's tracker).
# Made with Debian 12's ffmpeg 5.1 (apt-get install ffmpeg); another version may place packets
# differently, which is fine as long as the .keyframes files are regenerated with it.
set -eu
cd "$(dirname "$0")"
BITEXACT="-fflags +bitexact -flags:v +bitexact -map_metadata -1"
# jsmpeg's format: MPEG-1 video at 30 fps, a keyframe every 60 frames (2 s) or 30 frames (1 s).
ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=30 -t 6 \
  -c:v mpeg1video -g 60 $BITEXACT -f mpegts mpeg1-g60.ts
ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=30 -t 4 \
  -c:v mpeg1video -g 30 $BITEXACT -f mpegts mpeg1-g30.ts
# H.264 (a typical IP camera), keyframe every 30 frames; the test also clears random_access_indicator
# in it to exercise the by-content fallback (SPS/IDR).
ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=30 -t 4 \
  -c:v libx264 -preset veryfast -g 30 -x264-params scenecut=0 -pix_fmt yuv420p $BITEXACT \
  -f mpegts h264-g30.ts
for f in mpeg1-g60 mpeg1-g30 h264-g30; do
  # One line per keyframe packet: its byte position in the file (ffprobe's packet pos).
  ffprobe -v error -show_packets -select_streams v -show_entries packet=pos,flags -of csv=p=0 "$f.ts" \
    | awk -F, '$2 ~ /K/ { print $1 }' > "$f.keyframes"
done
