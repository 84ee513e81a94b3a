"""Test helpers: a real server on a real socket, and the published contract's schemas."""

from __future__ import annotations

import asyncio
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

    def __init__(self, app: Any, limits: server.ServerLimits | None = None, **options: Any) -> None:
        """`options`: uvicorn's own settings (timeout_keep_alive=1, say)."""
        self.app = app
        # IPPROTO_TCP and TCP_NODELAY: without them, asyncio leaves Nagle's algorithm on
        # for accepted connections, and every response waits ~40 ms for a delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = server.config(app, limits, log_level="warning", lifespan="on", **options)
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


def assert_gzipped_on_request(get: Any, path: str, vary: str) -> tuple[Any, Any]:
    """GET `path` without and with gzip (`get(path, headers=...)`): the same content, the
    second compressed and smaller, with `vary`; returns both responses."""
    plain = get(path, headers={"accept-encoding": "identity"})
    zipped = get(path, headers={"accept-encoding": "gzip"})
    assert plain.status_code == zipped.status_code == 200
    assert "content-encoding" not in plain.headers
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["vary"] == vary
    assert int(zipped.headers["content-length"]) < len(plain.content)
    assert zipped.content == plain.content  # httpx decodes it
    return plain, zipped


# A text that teaches two skills, one paragraph each (alignment, the explorer).
TWO_SKILLS = (
    "Today students tell time to the nearest minute and solve elapsed time problems on a"
    " number line.\n\nLater in the lesson they skip-count by fives, tens and hundreds within"
    " 1000 to warm up."
)

# Values that break naive code: injections, NULs, odd Unicode, huge numbers.
NASTY = [
    "' OR 1=1 --",
    "1; DROP TABLE docs; --",
    '" UNION SELECT doc FROM docs --',
    "a\x00b",
    "x" * 10_000,
    "３.NF.A.1",  # full-width digit
    "Mаthematics",  # Cyrillic a
    "-1",
    "99999999999999999999999",
    "1e309",
    "",
    " ",
    "null",
    "[]",
    "{}",
    "%",
    "../../etc/passwd",
    "\u202e\u200b",
]
