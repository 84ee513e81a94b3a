"""A whole answer leaves in one system call: the head is held for its body
(adapters/server.py, `_OneWrite`). Seen with strace on a real `edukg serve`, and the
stream and large-body cases on a real event loop and socket."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from edukg.adapters.server import _JOIN_BELOW, _OneWrite
from edukg.cli import build_demo
from edukg.ingest.demo import demo_case_uuid
from edukg.store import open_key_store
from harness.processes import EDUKG, free_port, stop, tree_env, wait_for
from tests.support import BASE

_WRITE = re.compile(r"^\d+\s+(write|writev|sendto|sendmsg)\((\d+), (.*)$")


def _strace_or_skip() -> str:
    strace = shutil.which("strace")
    reason = "strace is not installed" if strace is None else ""
    if strace is not None:
        probe = subprocess.run(
            [strace, "-f", "-o", os.devnull, "true"], capture_output=True, check=False
        )
        reason = "" if probe.returncode == 0 else f"strace cannot trace here: {probe.stderr!r}"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"strace is required under CI=true but {reason}")
        pytest.skip(reason)
    assert strace is not None
    return strace


def test_each_answer_is_one_write_of_head_and_body(tmp_path: Path) -> None:
    strace = _strace_or_skip()
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    key = open_key_store(db).create("one-write", rate=0)
    port, trace = free_port(), tmp_path / "trace"
    command = [strace, "-f", "-qq", "-s", "8192", "-e", "trace=write,writev,sendto,sendmsg",
               "-o", str(trace), *EDUKG, "serve", "--db", db, "--port", str(port),
               "--no-access-log"]  # fmt: skip
    standard = f"http://127.0.0.1:{port}{BASE}/academic-standards/" + demo_case_uuid(
        "ms-math", "3.NF.A.1"
    )
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=tree_env())  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", proc, seconds=60)
        with httpx.Client(headers={"x-api-key": key}) as client:
            for _ in range(5):
                response = client.get(standard)
                assert response.status_code == 200
            etag = client.get(standard).headers["etag"]
            assert client.get(standard, headers={"if-none-match": etag}).status_code == 304
    finally:
        stop(proc)  # strace and the server under it: the server outlived strace once
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    writes = [m for line in trace.read_text().splitlines() if (m := _WRITE.match(line))]
    answers = [m.group(3) for m in writes if m.group(3).startswith('"HTTP/1.1 ')]
    assert len(answers) >= 7, trace.read_text()[-3000:]
    for answer in answers:
        head_end = answer.index(r"\r\n\r\n")
        if answer.startswith('"HTTP/1.1 200'):
            assert answer[head_end + 8 :].startswith("{"), answer  # the body in the same call
    # No write of the body alone (as strace shows it: quotes escaped).
    body = '"' + response.content[:40].decode().replace('"', '\\"')
    assert [m.group(3) for m in writes if m.group(3).startswith(body)] == []


def test_a_head_without_its_body_leaves_at_the_next_turn_and_a_large_body_is_not_copied() -> None:
    async def scenario() -> list[bytes]:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)
        one = _OneWrite(transport, loop)
        theirs.setblocking(False)
        got: list[bytes] = []
        one.write(b"HTTP/1.1 200 OK\r\n\r\n")  # a stream's head: held ...
        await asyncio.sleep(0)
        await asyncio.sleep(0.01)
        got.append(theirs.recv(1 << 20))  # ... and gone at the next turn, alone
        one.write(b"data: 1\n\n")
        await asyncio.sleep(0.01)
        got.append(theirs.recv(1 << 20))
        large = b"x" * (_JOIN_BELOW + 1)
        one.write(b"HEAD\r\n\r\n")
        one.write(large)
        received = b""
        while len(received) < len(large) + 8:
            await asyncio.sleep(0.01)
            received += theirs.recv(1 << 22)
        got.append(received)
        one.close()
        theirs.close()
        return got

    stream_head, event, large = asyncio.run(scenario())
    assert stream_head == b"HTTP/1.1 200 OK\r\n\r\n"
    assert event == b"data: 1\n\n"
    assert large == b"HEAD\r\n\r\n" + b"x" * (_JOIN_BELOW + 1)


def _exchange_raw(port: int, request: bytes) -> tuple[bytes, bytes]:
    """One request on a raw connection: (the head, what followed it) once it closes or
    goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(request)
        conn.settimeout(0.5)
        got = b""
        try:
            while chunk := conn.recv(65536):
                got += chunk
        except TimeoutError:
            pass
    head, _, rest = got.partition(b"\r\n\r\n")
    return head, rest


def test_answers_carry_the_servers_headers_once_and_head_and_304_no_body(
    tmp_path: Path,
) -> None:
    from edukg.adapters.config import Settings
    from edukg.app.core import EdukgApp
    from tests.support import ServerThread

    db = str(tmp_path / "edukg.db")
    build_demo(db)
    key = open_key_store(db).create("whole", rate=0)
    server = ServerThread(EdukgApp(Settings(db=db))).start()
    path = f"{BASE}/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.1')}"
    ask = b"%s %s HTTP/1.1\r\nhost: x\r\nx-api-key: %s\r\n%s\r\n"
    try:
        head, body = _exchange_raw(server.port, ask % (b"GET", path.encode(), key.encode(), b""))
        lines = head.split(b"\r\n")
        names = [line.split(b":", 1)[0].lower() for line in lines[1:]]
        assert lines[0] == b"HTTP/1.1 200 OK"
        assert len(names) == len(set(names))  # each header once
        assert {b"date", b"server", b"etag", b"content-length", b"x-request-id"} <= set(names)
        length = next(
            int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length")
        )
        assert len(body) == length and body.startswith(b"{")
        etag = next(line.split(b": ", 1)[1] for line in lines if line.startswith(b"etag"))
        head, body = _exchange_raw(server.port, ask % (b"HEAD", path.encode(), key.encode(), b""))
        assert head.startswith(b"HTTP/1.1 200") and b"content-length: %d" % length in head
        assert body == b""
        cond = b"if-none-match: " + etag + b"\r\n"
        head, body = _exchange_raw(server.port, ask % (b"GET", path.encode(), key.encode(), cond))
        assert head.startswith(b"HTTP/1.1 304") and body == b""
        # A refusal that closes its connection (a body never read): answered, then closed.
        post = (b"POST %s/alignments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b"content-length: 10\r\n\r\n" % BASE.encode())  # fmt: skip
        head, body = _exchange_raw(server.port, post)
        assert head.startswith(b"HTTP/1.1 401") and b"connection: close" in head.lower()
        assert b"AuthenticationError" in body
    finally:
        server.stop()


def test_a_kept_alive_connection_idle_past_the_timeout_is_closed(tmp_path: Path) -> None:
    from edukg.adapters.config import Settings
    from edukg.app.core import EdukgApp
    from tests.support import ServerThread

    db = str(tmp_path / "edukg.db")
    build_demo(db)
    server = ServerThread(EdukgApp(Settings(db=db)), timeout_keep_alive=1).start()
    ask = b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            for _ in range(3):  # kept alive between answers closer together than the timeout
                conn.sendall(ask)
                assert conn.recv(65536).startswith(b"HTTP/1.1 200")
                time.sleep(0.4)
            started = time.monotonic()
            assert conn.recv(65536) == b""  # closed by the server once idle past 1 s
            assert 0.5 <= time.monotonic() - started + 0.4 < 3.0
    finally:
        server.stop()
