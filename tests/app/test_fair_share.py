"""The work pool's fair share through a real server: a new key among ten that hold every
place, work its key may not run refused before its body is read, queued work whose client
has gone dropped, and an MCP session's housekeeping priced as cheap.

The pool's threads are held by jobs the test releases (`Held`), on the server's own loop,
so what each test sees does not depend on how long real work takes."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.app.requests import HOUSEKEEPING_COST, MCP_COST, mcp_cost
from edukg.app.workpool import Busy
from edukg.cli import build_demo
from edukg.store import open_key_store
from tests.conftest import Api
from tests.mcp_client import call, session
from tests.support import BASE, ServerThread

TEXT = "Students add and subtract fractions with unlike denominators."
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


class _Door:
    """The app, and the loop it serves on (taken at start-up), so that the test can hold
    places of its work pool there."""

    def __init__(self, app: EdukgApp) -> None:
        self.app = app
        self.loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            self.loop = asyncio.get_running_loop()
        await self.app(scope, receive, send)


@dataclass
class Held:
    """Jobs on the server's work pool, each under a key's name, that wait for `gate`."""

    door: _Door
    gate: threading.Event = field(default_factory=threading.Event)
    jobs: list[tuple[str, Future[Any]]] = field(default_factory=list)

    def hold(self, owner: str, count: int = 1) -> None:
        assert self.door.loop is not None
        for _ in range(count):
            job = self.door.app.work.run(lambda: self.gate.wait(30), owner)
            self.jobs.append((owner, asyncio.run_coroutine_threadsafe(job, self.door.loop)))
        _until(lambda: self.door.app.work.busy >= len(self.jobs) - self.refused())

    def refused(self) -> int:
        """Held jobs refused (503) to make room for another key's request."""
        return sum(1 for _, job in self.jobs if job.done() and isinstance(job.exception(), Busy))

    def release(self) -> None:
        self.gate.set()
        for _, job in self.jobs:
            job.exception(timeout=30)  # finished, one way or the other


def _until(condition: Callable[[], bool], seconds: float = 10) -> None:
    """Wait for what the server does next (not a figure of how fast it does it)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.01)


@dataclass
class Served:
    door: _Door
    server: ServerThread
    keys: dict[str, str]

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        port: int = self.server.port
        return port


@pytest.fixture
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = str(tmp_path_factory.mktemp("fair") / "edukg.db")
    build_demo(db)
    store = open_key_store(db)
    names = [f"k{n}" for n in range(10)] + ["newcomer"]
    keys = {name: store.create(name, rate=0) for name in names}
    keys["metered"] = store.create("metered", rate=0.01, burst=100)
    store.close()
    door = _Door(EdukgApp(Settings(db=db, work_threads=2, work_waiting=8)))
    server = ServerThread(door).start()
    try:
        yield Served(door, server, keys)
    finally:
        server.stop()


@pytest.fixture
def held(served: Served) -> Iterator[Held]:
    jobs = Held(served.door)
    try:
        yield jobs
    finally:
        jobs.release()


def test_a_new_key_is_answered_while_ten_keys_hold_every_place(served: Served, held: Held) -> None:
    """Ten keys with one request each fill both threads and the eight waiting places; a
    new key's alignment takes the place of one of theirs (503 to it) and is answered once
    a thread frees (the bug: it was refused with 503, before any rule of turns applied)."""
    for n in range(10):
        held.hold(f"k{n}")
    assert served.door.app.work.busy == served.door.app.work.slots
    answer: list[httpx.Response] = []
    asking = threading.Thread(target=lambda: answer.append(httpx.post(
        f"{served.url}{BASE}/alignments", json={"text": TEXT}, timeout=60,
        headers={"x-api-key": served.keys["newcomer"]})))  # fmt: skip
    asking.start()
    try:
        _until(lambda: held.refused() == 1 or bool(answer))
        assert not answer, answer[0].text  # it waits for a thread, not refused
    finally:
        held.release()
        asking.join(60)
    assert answer[0].status_code == 200, answer[0].text


def _head_only(port: int, path: str, key: str, length: int) -> bytes:
    """A POST's head, its body never sent; what the server answers meanwhile (before the
    body's own deadline, 10 s: a server waiting for the body would answer nothing)."""
    head = (f"POST {path} HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\ncontent-type:"
            f" application/json\r\naccept: application/json, text/event-stream\r\n"
            f"content-length: {length}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", port), timeout=8) as s:
        s.sendall(head)
        received = b""
        while b'"requestId"' not in received:
            chunk = s.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def test_work_a_key_may_not_run_is_refused_before_its_body_is_read(
    served: Served, held: Held
) -> None:
    """The key runs its share and has its eight waiting: its next 20 KB check, and its
    next MCP call of that size, are refused (429) on their heads alone, on a connection
    that closes (the bug: the server read and parsed the body, then refused the work)."""
    held.hold("k0", 9)
    key = served.keys["k0"]
    for path in (f"{BASE}/alignments/check", f"{BASE}/alignments", "/mcp"):
        answer = _head_only(served.port, path, key, 20_000)
        assert answer.startswith(b"HTTP/1.1 429"), (path, answer[:300])
        assert b"connection: close" in answer.lower() and b"retry-after: 1" in answer.lower(), (
            answer.decode()
        )
    # A session's housekeeping is small and takes no share of the pool: still answered.
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    pong = httpx.post(f"{served.url}/mcp", json=hello, timeout=30,
                      headers={"x-api-key": key, **MCP_HEADERS})  # fmt: skip
    assert pong.status_code == 200, pong.text


def test_queued_work_whose_client_has_gone_is_dropped(served: Served, held: Held) -> None:
    """Both threads are held; a search waits for its turn, and its client closes the
    connection: the pool lets it go at once rather than working on it once a thread
    frees (the bug: it ran, for nobody)."""
    held.hold("k0")
    held.hold("k1")
    work = served.door.app.work
    path = f"{BASE}/academic-standards/search?query=fractions+gone"
    with socket.create_connection(("127.0.0.1", served.port), timeout=8) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nhost: x\r\nx-api-key: {served.keys['k2']}\r\n"
                  "\r\n".encode())  # fmt: skip
        _until(lambda: work.busy == 3)
    _until(lambda: work.busy == 2)
    assert work.status()["dropped"] == 1 and work.running == 2


def test_an_mcp_sessions_housekeeping_is_priced_as_cheap(served: Served) -> None:
    """initialize, notifications and the tool list cost 1 token each, so a session with
    one call costs that call and a few tokens more (the bug: five each, ten more than the
    same REST call)."""
    assert mcp_cost(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}') == 1
    assert mcp_cost(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}') == 1
    batch = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(3)]
    assert mcp_cost(json.dumps(batch).encode()) == 3 * HOUSEKEEPING_COST
    assert mcp_cost(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}') == MCP_COST
    headers = {"x-api-key": served.keys["metered"]}

    def remaining() -> int:
        r = httpx.get(f"{served.url}{BASE}/standards-frameworks", headers=headers)
        left: str = r.headers["ratelimit-remaining"]  # after this lookup's own token
        return int(left)

    async def one_call() -> None:
        api = Api(served.server, served.keys["metered"])
        try:
            async with session(api) as s:
                await call(s, "find_standard_statement", code="3.NF.A.1")
        finally:
            api.http.close()

    before = remaining()
    asyncio.run(one_call())
    after = remaining()
    seen = f"{before} -> {after}"
    # initialize, notifications/initialized and tools/list (the SDK checks the call's
    # answer against the tool's schema) 1 each, the call 5, and this lookup 1: 9 (21
    # before, every message 5).
    assert before - after == 3 * HOUSEKEEPING_COST + MCP_COST + 1, seen
