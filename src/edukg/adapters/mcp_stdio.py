"""MCP over stdio that answers what was asked before it exits.

The SDK's stdio transport ends the session when stdin closes, cancelling tool calls
still running: a client that writes its request and closes its end (a script, a pipe)
never got the answer. Here the end of stdin is held back until every request read has
been answered on stdout (or `DRAIN_SECONDS` have passed), then the session ends as before.

Only the SDK's public API is used (`MCPServer.run_stdio_async`): the process's standard
streams are given to it wrapped, a byte stream that notes each request's id as it is read
and holds its end, and one that notes each answer's id as it is written.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import orjson
from mcp.server.mcpserver import MCPServer

DRAIN_SECONDS = 120.0  # the longest an answer in flight is waited for once stdin closes


class _Asked:
    """Ids of the requests read and not yet answered (the reader and the writer run on
    the SDK's worker threads)."""

    def __init__(self) -> None:
        self._open: set[Any] = set()
        self._changed = threading.Condition()

    def add(self, ident: Any) -> None:
        with self._changed:
            self._open.add(ident)

    def answered(self, ident: Any) -> None:
        with self._changed:
            self._open.discard(ident)
            self._changed.notify_all()

    def wait_all_answered(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self._changed:
            while self._open and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)


def _message_id(line: bytes, answer: bool) -> Any:
    """The JSON-RPC id of a request (a method with an id), or with `answer` of a response."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict) or "id" not in message:
        return None
    kind = ("result" in message or "error" in message) if answer else "method" in message
    return orjson.dumps(message["id"]) if kind else None


class _Requests(io.RawIOBase):
    """stdin's bytes; each whole line's request id is noted, and the end waits for the
    answers to what was asked."""

    def __init__(self, source: Any, asked: _Asked) -> None:
        self._source = source
        self._asked = asked
        self._partial = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = (
            self._source.read1(len(buffer))
            if hasattr(self._source, "read1")
            else (self._source.read(len(buffer)))
        )
        if not data:  # the end: after every answer (this runs on a worker thread)
            self._asked.wait_all_answered(DRAIN_SECONDS)
            return 0
        self._note(data)
        buffer[: len(data)] = data
        return len(data)

    def _note(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            ident = _message_id(line, answer=False)
            if ident is not None:
                self._asked.add(ident)


class _Answers(io.RawIOBase):
    """stdout's bytes: each whole line written that answers a request closes it."""

    def __init__(self, target: Any, asked: _Asked) -> None:
        self._target = target
        self._asked = asked
        self._partial = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._target.write(chunk)
        self._target.flush()
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        for line in lines:
            ident = _message_id(line, answer=True)
            if ident is not None:
                self._asked.answered(ident)
        return len(chunk)


class _Stream:
    """A text stream whose `.buffer` is the given binary one (what the SDK reads of
    sys.stdin and sys.stdout)."""

    def __init__(self, buffer: io.BufferedIOBase) -> None:
        self.buffer = buffer


@contextlib.contextmanager
def _held_streams() -> Iterator[None]:
    asked = _Asked()
    stdin, stdout = sys.stdin, sys.stdout
    reader = io.BufferedReader(_Requests(stdin.buffer, asked))
    writer = io.BufferedWriter(_Answers(stdout.buffer, asked))
    sys.stdin, sys.stdout = _Stream(reader), _Stream(writer)
    try:
        yield
    finally:
        sys.stdin, sys.stdout = stdin, stdout


def run_stdio(server: MCPServer) -> None:
    """Serve `server` on stdin and stdout until stdin closes and every request is answered."""
    with _held_streams():
        anyio.run(server.run_stdio_async)
