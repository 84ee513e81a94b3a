"""A flood of expensive requests from many keys, for the fairness benchmarks
(bench/fairness.py, bench/hostile.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import httpx

# Sends one request on a key's client; the int is the key's number among the flooders.
Request = Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]


async def flood(base: str, keys: list[str], connections: int, request: Request, stop: float,
                established: asyncio.Event) -> dict[int, int]:  # fmt: skip
    """`connections` connections per key, each sending `request` after `request` until
    `stop` (monotonic time); the statuses they got. `established` is set once every key
    has had an answer: the flood is under way (not the server's first requests, the model
    loading). A refused request waits 50 ms before the next."""
    statuses: dict[int, int] = {}
    unanswered = set(keys)

    async def one(key: str, n: int) -> None:
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}, timeout=120) as c:
            while time.monotonic() < stop:
                r = await request(c, n)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                if r.status_code == 200:
                    unanswered.discard(key)
                    if not unanswered:
                        established.set()
                else:
                    await asyncio.sleep(0.05)

    await asyncio.gather(*(one(k, n) for n, k in enumerate(keys) for _ in range(connections)))
    return statuses
