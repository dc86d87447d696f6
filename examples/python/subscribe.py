#!/usr/bin/env python3
"""Prints each message of a Crossbar stream or topic on a line of its own, for ever.

    python3 subscribe.py ws://127.0.0.1:8080/out/lab/pendulum

Text messages are printed as they are; binary ones as their size. Reconnects by the client contract
(reconnect.py); while it is away, what the stream's rule says is missed (docs/protocol.md).
"""

import argparse
import asyncio
import logging
import os

from reconnect import Stop, keep_connected


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="ws://relay/out/<stream>, or an N:N topic ws://relay/<topic>")
    args = parser.parse_args()

    async def show(ws):
        async for message in ws:
            print(message if isinstance(message, str) else f"({len(message)} bytes)", flush=True)

    await keep_connected(args.url, show, token=os.environ.get("CROSSBAR_TOKEN"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        asyncio.run(main())
    except Stop as e:
        raise SystemExit(f"subscribe.py: {e}")
    except KeyboardInterrupt:
        pass
