"""Crossbar's client contract (docs/protocol.md#the-client-contract) for the `websockets` package.

keep_connected(url, handler) runs handler(ws) on a connection to url, and again on a new connection
whenever the relay closes it or cannot be reached, after a random delay of up to 0.5 s that doubles
with each failure up to 30 s ("full jitter": after a relay restart a lab's clients come back spread
out, not all at once). It stops, raising Stop, where retrying cannot help: a refused request (400,
403, 404, 405, 426: fix the URL or the token's scope), or a token the relay no longer takes (401,
close 1008: get a new one). A close 1000 (the other end finished) ends it quietly.

websockets' own `async for ws in connect(...)` reconnects too, but restarts its back-off whenever a
connection opens: a relay that accepts and then closes at once (1013 "no host", a slow consumer)
would be asked again immediately, for ever.
"""

import asyncio
import logging
import random
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

log = logging.getLogger("crossbar")

FIRST_DELAY = 0.5  # seconds: the first retry waits up to this
MAX_DELAY = 30.0  # no retry waits longer
STABLE = 10.0  # a connection that lasted this long worked: the next failure starts the back-off again

# HTTP refusals that the same request would meet again.
FINAL_STATUSES = {400, 401, 403, 404, 405, 426}


class Stop(Exception):
    """Reconnecting cannot help: the message says what to fix."""


async def keep_connected(url, handler, token=None):
    """Runs `await handler(ws)` on each connection to url until handler returns or Stop is raised.

    Nothing is resent: what handler sent before a close may or may not have arrived.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else None
    failures = 0
    while True:
        ws = None
        started = time.monotonic()
        try:
            # max_size: the relay bounds messages itself (--max-message, 10 MiB by default).
            async with connect(url, additional_headers=headers, max_size=None) as ws:
                log.info("connected to %s", url)
                await handler(ws)
                if ws.close_code is None:  # the handler is done, not the connection
                    return
        except InvalidStatus as e:
            status = e.response.status_code
            body = e.response.body.decode(errors="replace").strip()
            if status in FINAL_STATUSES:
                raise Stop(f"{url}: refused: {body or status}") from None
            log.warning("%s: refused: %s", url, body or status)  # 429, 503: the relay is full, for now
        except ConnectionClosed:
            pass  # the close code is read below
        except (OSError, TimeoutError, InvalidHandshake) as e:
            log.warning("%s: cannot connect: %s", url, e or type(e).__name__)

        if ws is not None and ws.close_code is not None:
            code, reason = ws.close_code, ws.close_reason
            if code == 1000:
                log.info("%s: closed 1000 %s", url, reason)
                return
            if code == 1008:
                raise Stop(f"{url}: closed 1008 {reason}: get a new token")
            log.warning("%s: closed %s %s", url, code, reason)  # 1009: what was sent is not resent

        if time.monotonic() - started >= STABLE:
            failures = 0
        delay = random.uniform(0, min(MAX_DELAY, FIRST_DELAY * 2**failures))
        failures += 1
        log.info("reconnecting in %.1f s", delay)
        await asyncio.sleep(delay)
