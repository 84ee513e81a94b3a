"""The one route table: every path the server answers, and which entrance answers it.

The API's operations under the base path (templates matched segment by segment, literal
segments first), fixed paths (health, readiness, the OpenAPI document, the docs page,
`/mcp`), and prefixes that own a subtree (the explorer, the CASE paths). Each entry
names its entrance (app/entrance.py), so the pipeline knows what to check, and may carry
a handler. A fixed path may carry its OpenAPI description, so the document lists exactly
what the table serves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edukg.adapters.rest.base import Operation
from edukg.app.entrance import Entrance
from edukg.app.exchange import Exchange
from edukg.app.http import Answer
from edukg.model.lru import Recent

Handler = Callable[[Exchange], Answer | None]  # None: nothing here after all (a 404)
_RECENT_PATHS = 4096


@dataclass(frozen=True)
class _Template:
    segments: tuple[str, ...]  # a "{name}" segment captures
    operation: Operation[Any]


@dataclass(frozen=True, slots=True)
class Found:
    """What answers a path: its entrance, and the operation (with its path values) or the
    handler it names, if any."""

    entrance: Entrance
    operation: Operation[Any] | None = None
    values: dict[str, str] | None = None
    handler: Handler | None = None
    label: str = "none"  # what metrics count it under: the operation id, or the route's path

    @property
    def counted_as(self) -> tuple[str, str]:
        """(entrance, operation): what metrics count a request under."""
        return self.entrance.name, self.label


class Router:
    """Finds what answers a path."""

    def __init__(self, base_path: str, operations: tuple[Operation[Any], ...]) -> None:
        self.base_path = base_path
        self._operations: dict[str, Operation[Any]] = {}
        self._templates: dict[int, list[_Template]] = {}
        self._exact: dict[str, Found] = {}
        self._fixed: dict[str, Found] = {}
        self._prefixes: list[tuple[str, Found]] = []
        self._recent: Recent[str, Found] = Recent(_RECENT_PATHS)
        self.documented: dict[str, dict[str, Any]] = {}  # path -> its OpenAPI path item
        for op in operations:
            path = base_path + op.path
            if "{" not in path:
                self._operations[path] = op
            else:
                segments = tuple(path.split("/"))
                self._templates.setdefault(len(segments), []).append(_Template(segments, op))
        for routes in self._templates.values():
            # More literal segments first, so /a/search beats /a/{id}.
            routes.sort(key=lambda r: -sum(not s.startswith("{") for s in r.segments))

    def entrances(
        self,
        entrance_of: Callable[[Operation[Any]], Entrance],
        missing: Entrance,
        nowhere: Entrance,
    ) -> None:
        """Who answers: each operation `entrance_of(op)`; a path under the base path that no
        operation has, `missing`; a path outside the API and every route, `nowhere`."""
        self._api_missing = Found(missing)
        self._nowhere = Found(nowhere)
        self._found_of = {
            t.operation.operation_id: Found(entrance_of(t.operation), t.operation,
                                            label=t.operation.operation_id)
            for routes in self._templates.values() for t in routes
        }  # fmt: skip
        for path, op in self._operations.items():
            self._exact[path] = Found(entrance_of(op), op, {}, label=op.operation_id)

    def fixed(
        self,
        path: str,
        entrance: Entrance,
        handler: Handler | None = None,
        doc: dict[str, Any] | None = None,
    ) -> None:
        """Answer `path` itself; `doc`: its OpenAPI path item, if listed."""
        self._fixed[path] = Found(entrance, handler=handler, label=path)
        if doc is not None:
            self.documented[path] = doc

    def prefix(self, path: str, entrance: Entrance, handler: Handler | None = None) -> None:
        """Answer `path` and everything under it."""
        self._prefixes.append((path, Found(entrance, handler=handler, label=path)))

    def under_base(self, path: str) -> bool:
        """Whether `path` lies under the API's base path."""
        return not self.base_path or path == self.base_path or path.startswith(self.base_path + "/")

    def find(self, path: str) -> Found:
        """What answers `path` (the 404 entrance's Found when nothing does); the answers
        for recent paths are remembered (a few thousand, oldest out), so a repeated
        request's path is one dictionary lookup."""
        found = self._exact.get(path) or self._fixed.get(path) or self._recent.get(path)
        if found is not None:
            return found
        found = self._search(path)
        self._recent.put(path, found)
        return found

    def _search(self, path: str) -> Found:
        for prefix, owner in self._prefixes:
            if path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/"):
                return owner
        if self.under_base(path):
            matched = self.match(path)
            if matched is None:
                return self._api_missing
            op, values = matched
            known = self._found_of[op.operation_id]
            return Found(known.entrance, op, values, label=known.label)
        return self._nowhere

    def match(self, path: str) -> tuple[Operation[Any], dict[str, str]] | None:
        """The operation and its captured path parameters, or None."""
        op = self._operations.get(path)
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
