"""The route table: path templates matched segment by segment."""

from __future__ import annotations

from dataclasses import dataclass

from edukg.adapters.rest.base import Operation


@dataclass(frozen=True)
class _Route:
    segments: tuple[str, ...]  # a "{name}" segment captures
    operation: Operation


class Router:
    """Finds the operation for a path; literal segments win over captures."""

    def __init__(self, base_path: str, operations: tuple[Operation, ...]) -> None:
        self.base_path = base_path
        self._exact: dict[str, Operation] = {}
        self._templates: dict[int, list[_Route]] = {}
        for op in operations:
            if "{" not in op.path:
                self._exact[base_path + op.path] = op
            else:
                segments = tuple((base_path + op.path).split("/"))
                self._templates.setdefault(len(segments), []).append(_Route(segments, op))
        for routes in self._templates.values():
            # More literal segments first, so /a/search beats /a/{id}.
            routes.sort(key=lambda r: -sum(not s.startswith("{") for s in r.segments))

    def under_base(self, path: str) -> bool:
        """Whether `path` lies under the API's base path."""
        return not self.base_path or path == self.base_path or path.startswith(self.base_path + "/")

    def match(self, path: str) -> tuple[Operation, dict[str, str]] | None:
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
