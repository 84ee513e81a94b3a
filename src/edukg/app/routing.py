"""The one route table: every path the server answers, and what answers it.

Four kinds of entry: the API's operations under the base path (templates matched segment
by segment, literal segments first); fixed paths (health, readiness, the OpenAPI
document, the docs page); prefixes that own a subtree (the explorer); and mounted ASGI
applications (the MCP endpoint). A fixed path may carry its OpenAPI description, so the
document lists exactly what the table serves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from edukg.adapters.rest.base import Operation

Headers = list[tuple[bytes, bytes]]
Response = tuple[int, bytes, Headers]
Scope = dict[str, Any]
Handler = Callable[[Scope], Response | None]  # None: nothing here after all (a 404)
Mount = Callable[..., Awaitable[None]]


@dataclass(frozen=True)
class _Template:
    segments: tuple[str, ...]  # a "{name}" segment captures
    operation: Operation[Any]


@dataclass(frozen=True)
class Found:
    """What answers a path: an operation (with its path values), a handler, or a mount;
    `api` says the path lies under the API's base path (a miss there is the API's 404)."""

    api: bool = False
    operation: Operation[Any] | None = None
    values: dict[str, str] | None = None
    handler: Handler | None = None
    mount: Mount | None = None


class Router:
    """Finds what answers a path."""

    def __init__(self, base_path: str, operations: tuple[Operation[Any], ...]) -> None:
        self.base_path = base_path
        self._exact: dict[str, Operation[Any]] = {}
        self._templates: dict[int, list[_Template]] = {}
        self._fixed: dict[str, Handler] = {}
        self._prefixes: list[tuple[str, Handler]] = []
        self._mounts: dict[str, Mount] = {}
        self._mount_prefixes: list[tuple[str, Mount]] = []
        self.documented: dict[str, dict[str, Any]] = {}  # path -> its OpenAPI path item
        for op in operations:
            if "{" not in op.path:
                self._exact[base_path + op.path] = op
            else:
                segments = tuple((base_path + op.path).split("/"))
                self._templates.setdefault(len(segments), []).append(_Template(segments, op))
        for routes in self._templates.values():
            # More literal segments first, so /a/search beats /a/{id}.
            routes.sort(key=lambda r: -sum(not s.startswith("{") for s in r.segments))

    def fixed(self, path: str, handler: Handler, doc: dict[str, Any] | None = None) -> None:
        """Answer `path` itself with `handler`; `doc`: its OpenAPI path item, if listed."""
        self._fixed[path] = handler
        if doc is not None:
            self.documented[path] = doc

    def prefix(self, path: str, handler: Handler) -> None:
        """Answer `path` and everything under it with `handler`."""
        self._prefixes.append((path, handler))

    def mount(self, path: str, app: Mount, subtree: bool = False) -> None:
        """Hand requests for `path` (and with `subtree`, every path under it) to an ASGI
        application."""
        if subtree:
            self._mount_prefixes.append((path, app))
        else:
            self._mounts[path] = app

    def under_base(self, path: str) -> bool:
        """Whether `path` lies under the API's base path."""
        return not self.base_path or path == self.base_path or path.startswith(self.base_path + "/")

    def find(self, path: str) -> Found | None:
        """What answers `path`, or None."""
        mount = self._mounts.get(path)
        if mount is not None:
            return Found(mount=mount)
        for prefix, mounted in self._mount_prefixes:
            if path.startswith(prefix + "/"):
                return Found(mount=mounted)
        if self.under_base(path):
            matched = self.match(path)
            if matched is None:
                return Found(api=True)
            return Found(api=True, operation=matched[0], values=matched[1])
        handler = self._fixed.get(path)
        if handler is not None:
            return Found(handler=handler)
        for prefix, owner in self._prefixes:
            if path == prefix or path.startswith(prefix + "/"):
                return Found(handler=owner)
        return None

    def match(self, path: str) -> tuple[Operation[Any], dict[str, str]] | None:
        """The operation and its captured path parameters, or None."""
        op = self._exact.get(path)
        if op is not None:
            return op, {}
        parts = path.split("/")
        for route in self._templates.get(len(parts), ()):
            captured: dict[str, str] = {}
            for want, got in zip(route.segments, parts, strict=True):
                if want.startswith("{"):
                    if not got:
                        break
                    captured[want[1:-1]] = got
                elif want != got:
                    break
            else:
                return route.operation, captured
        return None
