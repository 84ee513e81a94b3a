"""What a hostile client tried, against a real `edukg serve` process, over raw sockets.

Every loop here is bounded in count and time, and talks to loopback only.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest

from edukg.cli import build_demo
from edukg.store import open_key_store
from harness.processes import EDUKG, free_port, stop, wait_for
from tests.conftest import Api, error_of
from tests.support import BASE

HEADER_TIMEOUT = 1.0
MAX_CONNECTIONS = 48


@dataclass
class Served:
    """A running `edukg serve` and what a client needs to talk to it."""

    proc: subprocess.Popen[str]
    port: int
    key: str
    db: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def healthy(self) -> bool:
        response = httpx.get(
            f"{self.url}{BASE}/standards-frameworks", headers={"x-api-key": self.key}, timeout=5
        )
        return response.status_code == 200


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = tmp_path_factory.mktemp("hardening") / "edukg.db"
    build_demo(str(db))
    keys = open_key_store(str(db))
    key = keys.create("hardening")
    keys.close()
    port = free_port()
    proc = subprocess.Popen(
        [*EDUKG, "serve", "--db", str(db), "--port", str(port), "--no-access-log",
         "--header-timeout", str(HEADER_TIMEOUT), "--max-connections", str(MAX_CONNECTIONS)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", proc)
        yield Served(proc, port, key, db)
    finally:
        stop(proc)


def exchange(port: int, data: bytes, read_for: float = 3.0) -> bytes:
    """Send `data` on a fresh connection; read until the server closes or time is up."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_for) as s:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            s.sendall(data)
        reply = b""
        deadline = time.monotonic() + read_for
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            reply += chunk
        return reply


def error_shape(reply: bytes, status: int, error: str) -> dict[str, object]:
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), reply[:200]
    assert b"content-type: application/json" in head.lower()
    decoded: dict[str, object] = orjson.loads(body)
    assert decoded["error"] == error and decoded["message"] and decoded["requestId"]
    return decoded


def test_a_long_url_is_414_as_it_arrives(served: Served) -> None:
    for path in (f"{BASE}/standards-frameworks", "/mcp", "/healthz"):
        reply = exchange(served.port, b"GET " + path.encode() + b"?q=" + b"x" * 20_000)
        error_shape(reply, 414, "URITooLongError")


def test_large_headers_are_431_as_they_arrive(served: Served) -> None:
    for path in (b"/healthz", b"/mcp"):
        big = b"GET " + path + b" HTTP/1.1\r\nHost: a\r\n" + b"X-n: " + b"v" * 100_000 + b"\r\n"
        error_shape(exchange(served.port, big), 431, "HeadersTooLargeError")
        many = b"GET " + path + b" HTTP/1.1\r\nHost: a\r\n" + b"X-n: vvvvvvvvvvvv\r\n" * 5000
        error_shape(exchange(served.port, many), 431, "HeadersTooLargeError")


def test_endless_headers_do_not_grow_memory(served: Served) -> None:
    """Twenty connections each offering 8 MiB of header lines: each is cut off at the
    head limit, and the worker's memory stays where it was."""
    before = served.rss_mb()
    line = b"X-n: " + b"v" * 1000 + b"\r\n"
    socks = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", served.port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n")
        socks.append(s)
    refused = 0
    try:
        for s in socks:
            sent = 0
            try:
                while sent < 8 << 20:
                    s.sendall(line * 64)
                    sent += len(line) * 64
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                refused += 1
    finally:
        for s in socks:
            s.close()
    assert refused == 20
    assert served.rss_mb() - before < 40, (before, served.rss_mb())
    assert served.healthy()


def test_silent_and_dribbling_connections_are_closed(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as silent:
        started = time.monotonic()
        assert silent.recv(100) == b""
        assert time.monotonic() - started < HEADER_TIMEOUT + 3
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as slow:
        started = time.monotonic()
        closed = False
        for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\n":
            try:
                slow.send(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.2)
        if not closed:
            slow.settimeout(HEADER_TIMEOUT + 3)
            assert slow.recv(100) == b""
        assert time.monotonic() - started < 10


def test_idle_sockets_beyond_the_cap_do_not_starve_real_clients(served: Served) -> None:
    idle = [
        socket.create_connection(("127.0.0.1", served.port), timeout=5)
        for _ in range(MAX_CONNECTIONS * 2)
    ]
    try:
        started = time.monotonic()
        assert all(served.healthy() for _ in range(10))
        # The oldest idle ones were closed to make room, well before the head timeout.
        readable, _, _ = select.select(idle, [], [], 0.3)
        closed = [s for s in readable if s.recv(1) == b""]
        assert len(closed) >= MAX_CONNECTIONS
        assert time.monotonic() - started < HEADER_TIMEOUT
    finally:
        for s in idle:
            s.close()


def test_malformed_requests_get_the_error_shape(served: Served) -> None:
    reply = exchange(served.port, b"\x16\x03\x01 not http at all\r\n\r\n")
    error_shape(reply, 400, "ValidationError")


def test_the_file_limit_covers_the_connection_cap(served: Served) -> None:
    limits = Path(f"/proc/{served.proc.pid}/limits").read_text()
    soft = next(int(x.split()[3]) for x in limits.splitlines() if x.startswith("Max open files"))
    assert soft >= MAX_CONNECTIONS + 256 or soft >= os.sysconf("SC_OPEN_MAX")


def test_a_misspelled_parameter_is_refused_with_its_right_name(demo: Api) -> None:
    """?gradelevel=3 and ?grade=3 used to return every grade (200); a name that differs
    from a known one only by case, or a common alias, is now a 400 naming the right one.
    Other unknown parameters are still ignored, as the hosted API does."""
    for wrong in ("gradelevel", "GRADELEVEL", "grade", "grades"):
        response = demo.get("/academic-standards/search", query="fractions", **{wrong: "3"})
        body = error_of(response, 400, "ValidationError")
        assert body["message"] == f"Unknown parameter {wrong}: did you mean gradeLevel?"
        assert body["details"]["parameter"] == wrong
    response = demo.get("/standards-frameworks", subject="Mathematics")
    assert "did you mean academicSubject?" in error_of(response, 400, "ValidationError")["message"]
    assert demo.get("/standards-frameworks", utm_source="newsletter").status_code == 200
    # An alias the operation has no parameter for is an ordinary unknown parameter.
    assert demo.get("/standards-frameworks", grade="3").status_code == 200
    response = demo.http.post("/knowledge-graph/v0/alignments", json={"text": "x", "grade": "3"},
                              headers={"x-api-key": demo.key})  # fmt: skip
    assert "did you mean gradeLevel?" in error_of(response, 400, "ValidationError")["message"]


def test_slow_heads_at_the_cap_do_not_starve_a_keyed_client(tmp_path: Path) -> None:
    """Keyless connections that each sent one byte of a head, more than the cap and
    reopened as soon as they are closed, left no room for a keyed client's new
    connections (0 of 44 answered): a connection with part of a head was not idle, so the
    newcomer was refused. Now the connection waiting longest on an unfinished head goes."""
    cap = 24
    db = tmp_path / "edukg.db"
    build_demo(str(db))
    keys = open_key_store(str(db))
    key = keys.create("slow-heads")
    keys.close()
    port = free_port()
    # A head deadline far beyond the test: only the cap can make room.
    proc = subprocess.Popen(
        [*EDUKG, "serve", "--db", str(db), "--port", str(port), "--no-access-log",
         "--header-timeout", "300", "--max-connections", str(cap)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", proc)
        with _SlowHeads(port, cap + 16) as attack:
            attack.wait_full()
            answered = sum(_keyed_get(port, key) for _ in range(20))
        assert answered == 20, f"{answered} of 20 answered; {attack.reopened} slow heads reopened"
    finally:
        stop(proc)


def _keyed_get(port: int, key: str) -> bool:
    """One GET with the key on a new connection: whether it was answered 200."""
    request = (f"GET {BASE}/standards-frameworks HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\n"
               "connection: close\r\n\r\n").encode()  # fmt: skip
    return exchange(port, request, read_for=10).startswith(b"HTTP/1.1 200 ")


class _SlowHeads:
    """`count` connections, each holding one byte of a request head, reopened when closed
    (on a thread of its own, until the block ends)."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.reopened = 0
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        self._full = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)

    def __enter__(self) -> _SlowHeads:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        for s in self._open:
            s.close()

    def wait_full(self) -> None:
        """Until every connection has been opened once."""
        assert self._full.wait(timeout=30), "the slow heads could not connect"

    def _connect(self) -> None:
        with contextlib.suppress(OSError):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            s.sendall(b"G")
            self._open.append(s)

    def _hold(self) -> None:
        for _ in range(self.count):
            self._connect()
        self._full.set()
        while not self._stop.is_set():
            readable, _, _ = select.select(self._open, [], [], 0.05)
            for s in readable:  # closed by the server (nothing else is ever sent)
                self._open.remove(s)
                s.close()
            for _ in range(self.count - len(self._open)):
                self.reopened += 1
                self._connect()
            time.sleep(0.01)
