#!/usr/bin/env python3
"""Hosts 1:1 sessions on a schema=session stream: a shell in a terminal of its own for each client.

    python3 host_agent.py ws://127.0.0.1:8080 shell/lab1

on a relay started with --route '/shell/**:schema=session'. The agent waits on /in/shell/lab1;
for each client of /out/shell/lab1 (terminal.html) the relay sends it an offer, and the agent
opens the offer's /session/<id> and runs $SHELL (or /bin/sh) in a new pty there. Binary messages
are the terminal's bytes, both ways; a text message from the client is JSON, of which the agent
knows {"type": "resize", "cols": C, "rows": R}. A session ends when its shell exits (close 1000)
or its client goes. The agent reconnects to /in/... by the client contract (reconnect.py), e.g.
when the relay restarts; the relay ends a host's sessions when its host connection goes, so
sessions do not survive that.

Whoever may open /out/shell/lab1 gets a shell as the user running this: give the stream tokens
(docs/protocol.md, access control) and run the agent as a user, or in a container, made for it.
"""

import argparse
import asyncio
import fcntl
import json
import logging
import os
import pty
import signal
import struct
import termios

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from reconnect import Stop, keep_connected

log = logging.getLogger("crossbar")
SHELL = os.environ.get("SHELL", "/bin/sh")


async def serve_session(url):
    """Runs one shell on the session at url until either ends."""
    try:
        # The session path is its own credential: it works once, and needs no token.
        async with connect(url, max_size=None) as ws:
            pid, fd = pty.fork()
            if pid == 0:  # the child: becomes the shell, with the pty as its controlling terminal
                try:
                    os.execvpe(SHELL, [SHELL, "-i"], {**os.environ, "TERM": "xterm-256color"})
                finally:
                    os._exit(127)
            log.info("session %s: shell %d", url, pid)
            try:
                await relay_pty(ws, fd)
            finally:
                await end_shell(pid, fd)
    except (OSError, WebSocketException) as e:  # e.g. 404: the client left before we came
        log.warning("session %s: %s", url, e)


async def relay_pty(ws, fd):
    """Copies the pty's output to ws and ws's messages to the pty, until one side ends."""
    loop = asyncio.get_running_loop()
    output = asyncio.StreamReader()
    reading, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(output), os.fdopen(os.dup(fd), "rb", 0))

    async def to_client():
        try:
            while chunk := await output.read(65536):
                await ws.send(chunk)
        except OSError:
            pass  # EIO: the shell exited and the pty is gone

    async def to_shell():
        try:
            async for message in ws:
                if isinstance(message, bytes):
                    await write_all(fd, message)
                else:
                    control(fd, message)
        except ConnectionClosed:
            pass

    tasks = [asyncio.create_task(to_client()), asyncio.create_task(to_shell())]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    reading.close()


def control(fd, text):
    """Acts on a text message from the client: {"type": "resize", "cols": C, "rows": R}."""
    try:
        message = json.loads(text)
        if message.get("type") == "resize":
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", message["rows"], message["cols"], 0, 0))
    except (ValueError, KeyError, TypeError, AttributeError, struct.error) as e:
        log.warning("ignored control message %.80r: %s", text, e)


async def write_all(fd, data):
    """Writes to the pty without blocking the agent; waiting while the shell reads nothing holds
    the client back (the relay stops reading it) rather than filling memory."""
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            await asyncio.sleep(0.02)


async def end_shell(pid, fd):
    os.close(fd)  # hangs up the terminal: the shell gets SIGHUP
    try:
        await asyncio.wait_for(asyncio.to_thread(os.waitpid, pid, 0), 5)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("relay", help="the relay, ws://host:port (wss:// with TLS)")
    parser.add_argument("stream", help="the session stream, e.g. shell/lab1 (hosts on /in/<stream>)")
    args = parser.parse_args()
    relay = args.relay.rstrip("/")
    sessions = set()

    async def host(ws):
        async for text in ws:
            offer = json.loads(text)
            # In a cluster the offer's url is the client's node; else the session is on this relay.
            task = asyncio.create_task(serve_session(offer.get("url") or relay + offer["session"]))
            sessions.add(task)
            task.add_done_callback(sessions.discard)

    await keep_connected(f"{relay}/in/{args.stream.strip('/')}", host, token=os.environ.get("CROSSBAR_TOKEN"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        asyncio.run(main())
    except Stop as e:
        raise SystemExit(f"host_agent.py: {e}")
    except KeyboardInterrupt:
        pass
