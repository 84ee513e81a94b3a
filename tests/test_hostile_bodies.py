"""What a client sending bodies can and cannot do (a scenario): a body is read only once
its key is known good, it has a deadline, an upload over the limit is refused before it
is invited, the same work costs the same tokens on REST and MCP, and the response cache
weighs what it keeps."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app import body
from edukg.app.core import EdukgApp
from edukg.app.requests import mcp_cost
from edukg.cli import build_demo
from edukg.store import open_key_store
from tests.support import BASE, ServerThread


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerThread, str, str]]:
    db = str(tmp_path_factory.mktemp("hostile") / "edukg.db")
    build_demo(db)
    keys = open_key_store(db)
    key = keys.create("free", rate=0)
    metered = keys.create("metered", rate=0.01, burst=200)
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=db))).start()
    yield server, key, metered
    server.stop()


def _raw(port: int, head: bytes, wait: float = 3.0) -> bytes:
    """Send a request head (and nothing more), and read what comes back within `wait`."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(head)
        received = b""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            received += chunk
            if b"\r\n\r\n" in received and b'"requestId"' in received:
                break
        return received


def test_a_body_without_a_good_key_is_refused_before_it_is_read(
    served: tuple[ServerThread, str, str],
) -> None:
    server, _, _ = served
    head = (f"POST {BASE}/alignments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            "content-length: 200000\r\n\r\n").encode()  # fmt: skip
    started = time.monotonic()
    answer = _raw(server.port, head)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert b"connection: close" in answer.lower()
    assert time.monotonic() - started < 2.0  # not after waiting on the body


def test_an_expected_upload_over_the_limit_is_refused_before_it_is_invited(
    served: tuple[ServerThread, str, str],
) -> None:
    server, key, _ = served
    head = (f"POST {BASE}/alignments HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\n"
            "content-type: application/json\r\nexpect: 100-continue\r\n"
            "content-length: 300000\r\n\r\n").encode()  # fmt: skip
    answer = _raw(server.port, head)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"100 Continue" not in answer


def test_a_body_that_drips_in_meets_its_deadline(
    served: tuple[ServerThread, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, key, _ = served
    monkeypatch.setattr(body, "BODY_SECONDS", 1.5)
    head = (f"POST {BASE}/alignments HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\n"
            "content-type: application/json\r\ncontent-length: 1000\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(head)
        started = time.monotonic()
        answer = b""
        s.settimeout(0.4)
        while time.monotonic() - started < 8 and b'"requestId"' not in answer:
            s.sendall(b" ")  # a byte at a time, each well within the per-part wait
            try:
                answer += s.recv(65536)
            except TimeoutError:
                continue
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - started < 5


def _remaining(response: httpx.Response) -> int:
    return int(response.headers["ratelimit-remaining"])


def test_aligning_costs_the_same_on_rest_and_mcp(served: tuple[ServerThread, str, str]) -> None:
    server, _, metered = served
    text = ("Students add fractions with unlike denominators. " * 500)[:20_000]
    headers = {"x-api-key": metered}
    rest = httpx.post(f"{server.url}{BASE}/alignments", json={"text": text},
                      headers=headers, timeout=60)  # fmt: skip
    assert rest.status_code == 200, rest.text
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "align_text_to_standards", "arguments": {"text": text}}}  # fmt: skip
    mcp = httpx.post(f"{server.url}/mcp", json=call, timeout=60,
                     headers={**headers, "accept": "application/json, text/event-stream"})  # fmt: skip
    assert mcp.status_code == 200, mcp.text
    after = httpx.get(f"{server.url}{BASE}/standards-frameworks", headers=headers)
    rest_cost = 200 - _remaining(rest)  # the metered key's first request: a full bucket
    mcp_paid = _remaining(rest) - _remaining(mcp)
    assert rest_cost == 5 + 20_000 // 2000 == mcp_paid, (rest_cost, mcp_paid)
    assert _remaining(mcp) - _remaining(after) == 1
    assert mcp_cost(json.dumps(call).encode()) == 15
    assert mcp_cost(b"not json") == 5


def test_the_response_cache_keys_a_body_by_a_digest(
    served: tuple[ServerThread, str, str],
) -> None:
    server, key, _ = served
    for n in range(3):
        text = f"Case {n}: " + "students compare fractions with like denominators. " * 1200
        answered = httpx.post(f"{server.url}{BASE}/alignments", json={"text": text[:20_000]},
                              headers={"x-api-key": key}, timeout=60)  # fmt: skip
        assert answered.status_code == 200
    app: EdukgApp = server.app
    cache = app.responses
    for entry_key in cache._entries._entries:
        parts: tuple[object, ...] = entry_key  # type: ignore[assignment]
        size = sum(len(part) for part in parts if isinstance(part, bytes | str))
        assert size < 300, entry_key  # not the 20 KB text
