"""Test helpers: a real server on a real socket, and the published contract's schemas."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

import uvicorn

from edukg.adapters import server

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EDUKG_SHARED", ROOT.parent / "shared"))
SAMPLE = SHARED / "data" / "kg-sample"
CONTRACT = SHARED / "reference" / "knowledge-graph-openapi.yaml"
BASE = "/knowledge-graph/v0"


class ServerThread:
    """uvicorn serving an ASGI app on 127.0.0.1:<free port>, in a background thread."""

    def __init__(self, app: Any, limits: server.ServerLimits | None = None) -> None:
        # IPPROTO_TCP and TCP_NODELAY: without them, asyncio leaves Nagle's algorithm on
        # for accepted connections, and every response waits ~40 ms for a delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = server.config(app, limits, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    @property
    def url(self) -> str:
        """The server's root URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServerThread:
        """Start serving and wait until the socket answers."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Finish in-flight requests and stop."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()


def _to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema: `nullable`, and refs into `$defs`."""
    if isinstance(node, list):
        return [_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = {"$ref": node["$ref"].replace("#/components/schemas/", "#/$defs/")}
        return {"anyOf": [ref, {"type": "null"}]} if node.get("nullable") else ref
    out = {
        k: _to_json_schema(v)
        for k, v in node.items()
        if k not in ("nullable", "example", "examples", "discriminator", "xml")
    }
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "allOf" in out or "anyOf" in out or "oneOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@cache
def _load_contract(path: str) -> dict[str, Any]:
    import yaml

    with open(path, encoding="utf-8") as f:
        loaded: dict[str, Any] = yaml.safe_load(f)
    return loaded


def response_schema(spec: dict[str, Any], path: str, status: str = "200") -> dict[str, Any]:
    """The JSON Schema of one GET operation's response in an OpenAPI 3.0 document."""
    op = spec["paths"][path]["get"]
    schema = op["responses"][status]["content"]["application/json"]["schema"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": _to_json_schema(spec["components"]["schemas"]),
        **_to_json_schema(schema),
    }


def contract_schema(
    path: str, status: str = "200", nullable: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The published contract's schema for `path` (relative to the base path).

    `nullable` names properties that may also be null: the documented derivation gaps
    of records that lack those fields in the data (docs/data.md), and no others.
    """
    schema = response_schema(_load_contract(str(CONTRACT)), path, status)
    return _allow_null(schema, nullable) if nullable else schema


def _allow_null(node: Any, names: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_allow_null(x, names) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _allow_null(v, names) for k, v in node.items()}
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {
            k: ({"anyOf": [v, {"type": "null"}]} if k in names else v) for k, v in props.items()
        }
    return out


def contract_fields(record: dict[str, Any], fields: Any) -> list[str]:
    """The record's keys that the contract declares, in the record's order; the export's
    other properties are served after them, and a derived hasChildren comes last."""
    names = [f for f, _, _ in fields]
    assert list(record)[: len(names) - ("hasChildren" in names)] == [
        n for n in names if n != "hasChildren"
    ]
    if "hasChildren" in names:
        assert list(record)[-1] == "hasChildren"
    return [k for k in record if k in names]


class LatencyProxy:
    """A TCP proxy on loopback that delays every chunk by `delay` seconds each way, in
    order, as a database one network hop away would (for fault tests and benchmarks)."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port = target_port
        self.delay = delay
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._writers: list[asyncio.StreamWriter] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        tasks = asyncio.all_tasks(self._loop)
        for task in tasks:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        for writer in self._writers:
            writer.close()
        self._loop.run_until_complete(server.wait_closed())
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers.append(up_writer)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy stopping
            await asyncio.gather(
                self._pipe(reader, up_writer),
                self._pipe(up_reader, writer),
                return_exceptions=True,
            )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(chunk)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(deliver())
        try:
            while chunk := await reader.read(65536):
                queue.put_nowait((time.monotonic() + self.delay, chunk))
        except (ConnectionError, asyncio.CancelledError):
            sender.cancel()
            raise
        queue.put_nowait((0.0, b""))
        await sender

    def start(self) -> LatencyProxy:
        """Start proxying; returns once the port is known."""
        self._thread.start()
        self._ready.wait(5)
        return self

    def stop(self) -> None:
        """Stop accepting and end the proxy's loop."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


class SilentServer:
    """A socket that accepts connections and never answers (a hung Redis)."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port = self._sock.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._held.append(conn)  # read nothing, answer nothing

    def start(self) -> SilentServer:
        """Start accepting."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close everything."""
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._held:
            conn.close()
        self._sock.close()
