"""An open-loop load: requests sent at a fixed rate, whatever the server's pace.

A closed loop (wrk: each connection sends its next request when the last is answered)
measures, at saturation, mostly the queue; here request i is due at start + i / rate, and
its latency counts from when it was due, so a server that falls behind shows it
(coordinated omission avoided). Keep-alive HTTP/1.1 over `connections` sockets, each
request on the first idle one; raw asyncio streams, so that the client keeps up with a
few thousand requests a second on one core.
"""

from __future__ import annotations

import asyncio
import time


async def _send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> int:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    if length:
        await reader.readexactly(length)
    return status


async def run(
    port: int, paths: list[str], key: str, rate: float, seconds: float, connections: int = 64
) -> tuple[list[float], int]:
    """(latencies in seconds from each request's due time, errors) of `rate` requests a
    second over `paths` in turn for `seconds`."""
    requests = [
        (f"GET {p} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: {key}\r\n\r\n").encode() for p in paths
    ]
    idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    for _ in range(connections):
        idle.put_nowait(await asyncio.open_connection("127.0.0.1", port))
    latencies: list[float] = []
    errors = 0
    total = int(rate * seconds)
    start = time.perf_counter() + 0.1

    async def one(i: int) -> None:
        nonlocal errors
        due = start + i / rate
        conn = await idle.get()
        try:
            status = await _send(*conn, requests[i % len(requests)])
            errors += status != 200
        except (OSError, asyncio.IncompleteReadError):
            errors += 1
            conn = await asyncio.open_connection("127.0.0.1", port)
        latencies.append(time.perf_counter() - due)
        idle.put_nowait(conn)

    tasks = []
    for i in range(total):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(i)))
    await asyncio.gather(*tasks)
    while not idle.empty():
        _, writer = idle.get_nowait()
        writer.close()
    return latencies, errors
