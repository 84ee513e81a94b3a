"""What a cache hit costs: edukg against HTTP itself, in one run.

    python -m bench.hot_path [--export DIR] [--rounds 3] [--seconds 6] [--before REV]
                             [--guard 0.10]

Every server is one process pinned to core 0; wrk (-t1 -c32) runs on core 1. Kinds, each
round, in alternating order:

- nginx, one worker, serving a static file of the cached answer's size;
- a trivial ASGI app that returns those bytes, under edukg's own server (uvicorn, uvloop,
  httptools, the guarded protocol): the ceiling for anything in Python on this server;
- edukg answering one standard over and over from its response cache ("hit");
- edukg answering a mix of about 850 distinct lookups of the sample (standards,
  children, crosswalks, components, frameworks' first pages) with its response cache,
  so that every answer is a hit after the first round ("mix");
- the same mix without the response cache ("mix, no cache").

With `--before REV`, the edukg kinds run for that revision too (a temporary worktree,
the same virtual environment), alternated with this tree's. Prints medians, ratios to
the trivial app and to REV, and p99 latencies; needs wrk, nginx and taskset. With
`--guard F` as well, it exits 1 when the hit or the mix (cached) is more than the share F
slower than at REV (`make bench-guard BEFORE=REV`: a 10% loss fails it). The access log is off,
as in every serve figure; `--access-log` turns it on to measure what it costs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.serve import BASE
from harness.load import wrk as serve_wrk
from harness.processes import EDUKG, free_port, wait_port
from harness.revisions import checkout

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = ROOT.parent / "shared" / "data" / "kg-sample"
_TRIVIAL = textwrap.dedent(
    """
    from edukg.adapters import server
    BODY = open({body!r}, "rb").read()
    HEADERS = [(b"content-type", b"application/json"),
               (b"content-length", str(len(BODY)).encode())]

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({{"type": "http.response.start", "status": 200, "headers": HEADERS}})
        await send({{"type": "http.response.body", "body": BODY}})

    sock = server.bind("127.0.0.1", {port})
    server.run(server.config(app, log_level="warning"), sock)
    """
)
_NGINX = textwrap.dedent(
    """
    worker_processes 1;
    daemon off;
    pid {dir}/nginx.pid;
    error_log {dir}/error.log;
    events {{ worker_connections 1024; }}
    http {{
        access_log off;
        server {{
            listen 127.0.0.1:{port};
            location / {{ root {dir}/www; default_type application/json; try_files /body =404; }}
        }}
    }}
    """
)


def wrk(port: int, paths: list[str], headers: dict[str, str], seconds: int) -> dict[str, float]:
    """req/s, p99 ms and errors of wrk over `paths` in turn (bench/serve.py's runner)."""
    return serve_wrk(f"http://127.0.0.1:{port}", paths, headers, seconds)


def mix_paths(db: str, size: int = 850) -> list[str]:
    """About `size` distinct lookups of real records: standards and their children and
    crosswalks, learning components, frameworks' first pages."""
    c = sqlite3.connect(db)
    standards = [r[0] for r in c.execute(
        "SELECT case_uuid FROM docs WHERE kind = 'standard' AND case_uuid IS NOT NULL"
        " ORDER BY identifier LIMIT ?", (size * 2 // 3,))]  # fmt: skip
    components = [r[0] for r in c.execute(
        "SELECT identifier FROM docs WHERE kind = 'component' ORDER BY identifier LIMIT ?",
        (size // 5,))]  # fmt: skip
    walked = [r[0] for r in c.execute(
        "SELECT DISTINCT d.case_uuid FROM docs d JOIN rows r ON r.node = d.identifier"
        " AND r.relation = 'crosswalk' LIMIT ?", (size // 10,))]  # fmt: skip
    frameworks = [
        r[0]
        for r in c.execute(
            "SELECT case_uuid FROM docs WHERE kind = 'framework' AND case_uuid IS NOT NULL"
        )
    ]
    c.close()
    paths = [f"{BASE}/academic-standards/{s}" for s in standards]
    paths += [f"{BASE}/academic-standards/{s}/children" for s in standards[: size // 10]]
    paths += [f"{BASE}/learning-components/{lc}" for lc in components]
    paths += [f"{BASE}/academic-standards/{s}/crosswalks" for s in walked]
    paths += [f"{BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={f}"
              for f in frameworks]  # fmt: skip
    return paths[:size]


@contextlib.contextmanager
def running(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    proc = subprocess.Popen(["taskset", "-c", "0", *command], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_port(port)
        time.sleep(0.3)
        yield
    finally:
        proc.terminate()
        proc.wait()


def _edukg(src: Path, db: str, port: int, cache: bool, log: bool) -> list[str]:
    cmd = [*EDUKG, "serve", "--db", db, "--port", str(port)]
    return (
        cmd + ([] if log else ["--no-access-log"]) + ([] if cache else ["--response-cache-mb", "0"])
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(SAMPLE))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--before", default=None, help="an earlier revision to alternate with")
    parser.add_argument("--guard", type=float, default=None, metavar="F",
                        help="with --before: exit 1 if the hit or the mix is F (0.10) slower")  # fmt: skip
    parser.add_argument("--access-log", action="store_true", help="edukg with its access log on")
    parser.add_argument("--pg", default=None, metavar="URL",
                        help="also the mix on PostgreSQL (a database made and dropped here)")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        trees = {"edukg": ROOT / "src"}
        if args.before:
            trees["before"] = stack.enter_context(checkout(args.before))
        db = str(Path(tmp) / "hot.db")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        cli = [*EDUKG]
        subprocess.run([*cli, "load", args.export, "--db", db, "--no-index"], env=env,
                       check=True, capture_output=True)  # fmt: skip
        made = subprocess.run([*cli, "keys", "create", "hot", "--rate", "0", "--db", db],
                              env=env, check=True, capture_output=True, text=True)  # fmt: skip
        headers = {"x-api-key": made.stdout.splitlines()[-1]}
        paths = mix_paths(db)
        one = paths[0]
        body = _fetch(trees["edukg"], db, one, headers)
        www = Path(tmp) / "www"
        www.mkdir()
        (www / "body").write_bytes(body)
        for readable in (Path(tmp), www, www / "body"):  # nginx's workers run as another user
            readable.chmod(0o755)
        print(f"one standard: {len(body)} bytes; mix: {len(paths)} distinct paths", flush=True)
        pg = stack.enter_context(_postgres(args.pg, args.export, env)) if args.pg else None
        pg_headers = headers
        if pg is not None:
            made = subprocess.run([*cli, "keys", "create", "hot", "--rate", "0", "--db", pg],
                                  env=env, check=True, capture_output=True, text=True)  # fmt: skip
            pg_headers = {"x-api-key": made.stdout.splitlines()[-1]}
        kinds = _kinds(tmp, db, trees, args.access_log, pg)
        figures: dict[str, list[dict[str, float]]] = {}
        for n in range(args.rounds):
            order = list(kinds) if n % 2 == 0 else list(reversed(kinds))
            for name in order:
                command, env_of, which = kinds[name]
                port = free_port()
                keyed = pg_headers if " PG " in name else headers
                with running(command(port), port, env_of):
                    if which == "mix":
                        wrk(port, paths, keyed, 2)  # every answer kept: then all hits
                    got = wrk(port, paths if which == "mix" else [one], keyed, args.seconds)
                figures.setdefault(name, []).append(got)
                print(f"round {n + 1} {name}: {got}", file=sys.stderr, flush=True)
        _report(figures)
    if args.before and args.guard is not None:
        return _guard(figures, args.before, args.guard)
    return 0


def _fetch(src: Path, db: str, path: str, headers: dict[str, str]) -> bytes:
    import httpx

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src)}
    with running(_edukg(src, db, port, True, False), port, env):
        return httpx.get(f"http://127.0.0.1:{port}{path}", headers=headers).content


@contextlib.contextmanager
def _postgres(url: str, export: str, env: dict[str, str]) -> Iterator[str]:
    """A database of its own on the PostgreSQL at `url`, loaded with `export`."""
    import psycopg

    name = f"edukg_hot_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    db = url.rsplit("/", 1)[0] + "/" + name
    try:
        subprocess.run([*EDUKG, "load", export, "--db", db,
                        "--no-index"], env=env, check=True, capture_output=True)  # fmt: skip
        yield db
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _kinds(
    tmp: str, db: str, trees: dict[str, Path], log: bool, pg: str | None
) -> dict[str, tuple[Any, Any, str]]:
    nginx_conf = Path(tmp) / "nginx.conf"
    trivial = Path(tmp) / "trivial.py"

    def nginx(port: int) -> list[str]:
        nginx_conf.write_text(_NGINX.format(dir=tmp, port=port))
        return ["nginx", "-c", str(nginx_conf)]

    def asgi(port: int) -> list[str]:
        trivial.write_text(_TRIVIAL.format(body=f"{tmp}/www/body", port=port))
        return [sys.executable, str(trivial)]

    kinds: dict[str, tuple[Any, Any, str]] = {"nginx": (nginx, None, "one"),
                                              "trivial ASGI": (asgi, None, "one")}  # fmt: skip
    for name, src in trees.items():
        env = {**os.environ, "PYTHONPATH": str(src)}
        for label, cache, which in (("hit", True, "one"), ("mix", True, "mix"),
                                    ("mix, no cache", False, "mix")):  # fmt: skip
            kinds[f"{name} {label}"] = (
                lambda port, s=src, c=cache: _edukg(s, db, port, c, log), env, which)  # fmt: skip
        if pg is not None:
            kinds[f"{name} PG mix, no cache"] = (
                lambda port, s=src: _edukg(s, pg, port, False, log), env, "mix")  # fmt: skip
    return kinds


def _median(figures: dict[str, list[dict[str, float]]], name: str) -> float:
    return statistics.median(f["rps"] for f in figures[name])


def _report(figures: dict[str, list[dict[str, float]]]) -> None:
    trivial = _median(figures, "trivial ASGI")
    print(f"{'median':<26}{'req/s':>10}{'of trivial':>12}{'of before':>11}{'p99 ms':>10}"
          f"{'errors':>9}")  # fmt: skip
    for name, runs in figures.items():
        rps = _median(figures, name)
        before = name.replace("edukg ", "before ", 1)
        ratio = (
            f"{rps / _median(figures, before):.2f}" if before in figures and before != name else ""
        )
        p99 = statistics.median(f["p99 ms"] for f in runs)
        bad = sum(f["errors"] for f in runs)
        print(f"{name:<26}{rps:>10.0f}{rps / trivial:>12.2f}{ratio:>11}{p99:>10.2f}{bad:>9.0f}")


def _guard(figures: dict[str, list[dict[str, float]]], before: str, loss: float) -> int:
    """1 when the cached hit or mix lost more than `loss` against `before` in this run."""
    failed = 0
    for kind in ("hit", "mix"):
        ratio = _median(figures, f"edukg {kind}") / _median(figures, f"before {kind}")
        verdict = "ok" if ratio >= 1 - loss else "SLOWER"
        failed |= verdict != "ok"
        print(f"guard: {kind} at {ratio:.2f} of {before} (a loss over {loss:.0%} fails): {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
