"""Finding what answers a path: edukg's route table against Starlette's router.

    python -m bench.routing [--rounds 5]

Both hold the same routes: the API's 31 operations under the base path, the fixed
paths, the explorer's and the CASE paths' prefixes, `/mcp`. Each round times every path
of a mix (a standard, its children, a learning component, a search, a framework's page,
a CASE document, a fixed path, a miss) through each, alternating which goes first, and
prints medians in microseconds per lookup. Starlette ships with the MCP SDK edukg already
installs; this figure is why the route table stays edukg's own (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from starlette.routing import Match, Mount, Route, Router

from edukg.adapters.config import DEFAULT_BASE_PATH as BASE
from edukg.adapters.rest import OPERATIONS
from edukg.app.entrance import Entrance
from edukg.app.routing import Router as Table

ROOT = Path(__file__).resolve().parents[1]

UUID = "6b9bf846-d7cc-11e8-824f-0242ac160002"
PATHS = [
    f"{BASE}/academic-standards/{UUID}",
    f"{BASE}/academic-standards/{UUID}/children",
    f"{BASE}/learning-components/{UUID}",
    f"{BASE}/academic-standards/search",
    f"{BASE}/academic-standards",
    f"/ims/case/v1p1/CFDocuments/{UUID}",
    "/healthz",
    f"{BASE}/nothing/here",
]


async def _endpoint(scope: Any, receive: Any, send: Any) -> None:
    """Never called: only matching is timed."""


def _starlette() -> Router:
    routes: list[Any] = [Route(BASE + op.path, _endpoint, methods=[op.method]) for op in
                         sorted(OPERATIONS, key=lambda o: o.path.count("{"))]  # fmt: skip
    routes += [Route(p, _endpoint) for p in ("/healthz", "/readyz", "/openapi.json", "/",
                                             "/favicon.ico", "/docs", "/mcp")]  # fmt: skip
    routes += [Mount("/explore", app=_endpoint), Mount("/ims/case", app=_endpoint)]
    return Router(routes)


def _table() -> Table:
    entrance = Entrance("any", lambda ex: (200, b"", []))
    table = Table(BASE, OPERATIONS)
    table.entrances(lambda op: entrance, entrance, entrance)
    for path in ("/healthz", "/readyz", "/openapi.json", "/", "/favicon.ico", "/docs", "/mcp"):
        table.fixed(path, entrance)
    for prefix in ("/explore", "/ims/case"):
        table.prefix(prefix, entrance)
    return table


def _starlette_find(router: Router, path: str) -> Any:
    scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
    for route in router.routes:
        match, child = route.matches(scope)
        if match is Match.FULL:
            return route, child
    return None


def _time(find: Any, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        for path in PATHS:
            find(path)
    return (time.perf_counter() - started) / (repeat * len(PATHS)) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20_000)
    args = parser.parse_args()
    table, router = _table(), _starlette()
    kinds = {"edukg route table": table.find,
             "Starlette router": lambda path: _starlette_find(router, path)}  # fmt: skip
    figures: dict[str, list[float]] = {k: [] for k in kinds}
    for n in range(args.rounds):
        order = list(kinds) if n % 2 == 0 else list(reversed(kinds))
        for name in order:
            figures[name].append(_time(kinds[name], args.repeat))
    base = statistics.median(figures["edukg route table"])
    print(f"{'median µs per lookup':<24}{'µs':>8}{'ratio':>8}")
    for name, runs in figures.items():
        median = statistics.median(runs)
        print(f"{name:<24}{median:>8.2f}{median / base:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
