"""MCP over stdio that answers what was asked before it exits.

The SDK's stdio transport ends the session when stdin closes, cancelling tool calls
still running: a client that writes its request and closes its end (a script, a pipe)
never got the answer. Here stdin's end is held back until every request read has been
answered on stdout (or `DRAIN_SECONDS` have passed), then the session ends as before.
"""

from __future__ import annotations

import io
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

DRAIN_SECONDS = 120.0  # the longest an answer in flight is waited for once stdin closes


class _Asked:
    """Ids of the requests read and not yet answered."""

    def __init__(self) -> None:
        self.open: set[Any] = set()


def _message_id(line: str | bytes, answer: bool) -> Any:
    """The JSON-RPC id of a request (a method with an id), or with `answer` of a response."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict) or "id" not in message:
        return None
    kind = ("result" in message or "error" in message) if answer else "method" in message
    return orjson.dumps(message["id"]) if kind else None


class _Lines:
    """stdin's lines; at its end, waits for the answers to what was asked."""

    def __init__(self, source: Any, asked: _Asked) -> None:
        self._source = source
        self._asked = asked

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            ident = _message_id(line, answer=False)
            if ident is not None:
                self._asked.open.add(ident)
            yield line
        with anyio.move_on_after(DRAIN_SECONDS):
            while self._asked.open:
                await anyio.sleep(0.01)


class _Answers:
    """stdout: each answer written and flushed closes its request."""

    def __init__(self, target: Any, asked: _Asked) -> None:
        self._target = target
        self._asked = asked

    async def write(self, text: str) -> None:
        """Write one message (a line)."""
        await self._target.write(text)
        await self._target.flush()
        ident = _message_id(text, answer=True)
        if ident is not None:
            self._asked.open.discard(ident)

    async def flush(self) -> None:
        """Written already, message by message."""
        await self._target.flush()


async def _run(server: MCPServer) -> None:
    asked = _Asked()
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))
    lines, answers = _Lines(stdin, asked), _Answers(stdout, asked)
    async with stdio_server(stdin=lines, stdout=answers) as (read, write):  # type: ignore[arg-type]
        # What the SDK's own run_stdio_async does, over these streams.
        low = server._lowlevel_server
        await low.run(read, write, low.create_initialization_options())


def run_stdio(server: MCPServer) -> None:
    """Serve `server` on stdin and stdout until stdin closes and every request is answered."""
    anyio.run(_run, server)
