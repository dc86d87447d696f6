#!/usr/bin/env python3
"""Publishes an experiment's readings to a Crossbar stream, one JSON text message each, for ever.

    python3 publish.py ws://127.0.0.1:8080/in/lab/pendulum

Every subscriber of /out/lab/pendulum receives each reading. Reconnects by the client contract
(reconnect.py). Readings are not kept while the relay is away: the next one supersedes them. On a
start=last stream the relay gives newcomers the last reading, but forgets it when it restarts: the
first reading after each reconnection gives it back. `seq` counts readings, so a subscriber sees
what it missed (a gap) or got twice (a start=last replay).
"""

import argparse
import asyncio
import json
import logging
import math
import os
import time

from reconnect import Stop, keep_connected


def read_sensor():
    """Stands for the experiment: replace with your sensor's reading."""
    return {"angle": round(30 * math.sin(time.time()), 2)}


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the stream's publisher URL, ws://relay/in/<stream>")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between readings (default 1)")
    args = parser.parse_args()
    seq = 0

    async def publish(ws):
        nonlocal seq
        while True:
            seq += 1
            await ws.send(json.dumps({"seq": seq, "time": time.time(), **read_sensor()}))
            await asyncio.sleep(args.interval)

    await keep_connected(args.url, publish, token=os.environ.get("CROSSBAR_TOKEN"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        asyncio.run(main())
    except Stop as e:
        raise SystemExit(f"publish.py: {e}")
    except KeyboardInterrupt:
        pass
