#!/usr/bin/env python3
"""Publishes a live MPEG-TS camera from standard input to a Crossbar stream, for ever.

    ffmpeg -f v4l2 -i /dev/video0 -f mpegts -c:v mpeg1video -b:v 1000k -bf 0 -g 30 - \\
        | python3 camera.py ws://127.0.0.1:8080/in/cam/1

Each chunk of whole 188-byte TS packets becomes one binary message, as jsmpeg's relay forwards
them. Reconnects by the client contract (reconnect.py) while ffmpeg keeps running: what the
camera films while the relay is away is read and dropped, so that the stream is live again at
once when it is back (on a start=keyframe stream a viewer's picture returns at the next
keyframe: -g 30 is one a second at 30 fps). Ends when its input does.
"""

import argparse
import asyncio
import logging
import os
import sys

from websockets.exceptions import ConnectionClosed

from reconnect import Stop, keep_connected

PACKET = 188  # bytes in an MPEG-TS packet


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the stream's publisher URL, ws://relay/in/<stream>")
    args = parser.parse_args()

    loop = asyncio.get_running_loop()
    camera = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(camera), sys.stdin.buffer)
    connected = None  # the current connection; None while the relay is away

    async def hold(ws):
        nonlocal connected
        connected = ws
        try:
            await ws.wait_closed()
        finally:
            connected = None

    async def send_camera():
        rest = b""
        while chunk := await camera.read(65536):
            data = rest + chunk
            whole = len(data) - len(data) % PACKET
            rest = data[whole:]
            if connected is not None and whole:
                try:
                    await connected.send(data[:whole])
                except ConnectionClosed:
                    pass  # keep_connected reconnects; the camera goes on meanwhile

    relay = asyncio.create_task(keep_connected(args.url, hold, token=os.environ.get("CROSSBAR_TOKEN")))
    camera_done = asyncio.create_task(send_camera())
    await asyncio.wait([relay, camera_done], return_when=asyncio.FIRST_COMPLETED)
    if relay.done():
        relay.result()  # raises Stop when the relay refuses us for good


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        asyncio.run(main())
    except Stop as e:
        raise SystemExit(f"camera.py: {e}")
    except KeyboardInterrupt:
        pass
