"""store/pg_wire.py alone against psycopg 3 set up for speed, on the same statements.

    python -m bench.pg_wire [--pg URL] [--export ../shared/data/kg-sample] [--rounds 3]

Loads the export into a scratch PostgreSQL database, then runs the request path's own
statements (a record by identifier, a page of a framework's items, a pre-encoded row, a
neighbour list) through each reader, alternating them round by round:

- pg_wire: a libpq connection per thread, statements prepared once, binary results,
  waits in select;
- psycopg: a connection per thread, `prepare=True` (server-side prepared statements),
  binary results, the cursor's default row tuples.

For each: microseconds of CPU per query on one thread (process time), and queries per
second with 1 and 8 threads (each its own connection). Medians of the rounds.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from edukg.store.pg_wire import WireReader
from harness.processes import EDUKG

ROOT = Path(__file__).resolve().parents[1]

PG_ADMIN = os.environ.get("EDUKG_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

Runner = Callable[[str, list[Any]], list[tuple[Any, ...]]]


def _statements(url: str) -> list[tuple[str, list[Any]]]:
    """The request path's statements, with parameters taken from the loaded data."""
    with psycopg.connect(url) as conn:
        current = conn.execute("SELECT schema_name FROM edukg.current WHERE id = 1").fetchone()
        assert current is not None, "nothing loaded"
        (schema,) = current
        p = f'"{schema}".'
        ids = [r[0] for r in conn.execute(
            f"SELECT identifier FROM {p}docs WHERE kind = 'standard' ORDER BY identifier LIMIT 200"
        )]  # fmt: skip
        found = conn.execute(f"SELECT identifier FROM {p}docs WHERE kind = 'framework' LIMIT 1")
        first = found.fetchone()
        assert first is not None, "no framework"
        (framework,) = first
    out: list[tuple[str, list[Any]]] = []
    for n, identifier in enumerate(ids):
        out.append((f"SELECT identifier, kind, doc FROM {p}docs WHERE identifier = %s AND"
                    " kind = %s", [identifier, "standard"]))  # fmt: skip
        if n % 4 == 0:
            out.append((f"SELECT l.other FROM {p}links l WHERE l.relation = %s AND"
                        " l.node = ANY(%s) ORDER BY l.node, l.other", ["child", ids[n : n + 5]]))  # fmt: skip
        if n % 10 == 0:
            out.append((f"SELECT m.identifier, d.doc FROM {p}membership m JOIN {p}docs d ON"
                        " d.identifier = m.identifier AND d.kind = 'standard' WHERE"
                        " m.framework = %s AND m.identifier > %s ORDER BY m.identifier"
                        " LIMIT 100", [framework, identifier]))  # fmt: skip
    return out


def _wire(url: str) -> Callable[[], Runner]:
    reader = WireReader(url)
    return lambda: reader.query


def _psycopg(url: str) -> Callable[[], Runner]:
    def make() -> Runner:
        conn = psycopg.connect(url, autocommit=True)
        cur = conn.cursor(binary=True)

        def run(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
            cur.execute(sql, params, prepare=True)
            return cur.fetchall()

        return run

    return make


def _cpu_per_query(make: Callable[[], Runner], statements: list[tuple[str, list[Any]]]) -> float:
    run = make()
    for sql, params in statements[:50]:  # prepare everything first
        run(sql, params)
    started = time.process_time()
    for sql, params in statements:
        run(sql, params)
    return (time.process_time() - started) / len(statements) * 1e6


def _throughput(
    make: Callable[[], Runner], statements: list[tuple[str, list[Any]]], threads: int,
    seconds: float,
) -> float:  # fmt: skip
    done = [0] * threads
    stop = time.monotonic() + seconds

    def work(n: int) -> None:
        run = make()
        i = n
        while time.monotonic() < stop:
            sql, params = statements[i % len(statements)]
            run(sql, params)
            i += threads
            done[n] += 1

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(done) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg", default=PG_ADMIN)
    parser.add_argument("--export", default=str(ROOT.parent / "shared/data/kg-sample"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    name = f"edukg_bench_wire_{secrets.token_hex(3)}"
    with psycopg.connect(args.pg, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(args.pg)
    url = urlunsplit(parts._replace(path=f"/{name}"))
    try:
        subprocess.run([*EDUKG, "load", args.export, "--db", url, "--no-index"], check=True,
                       capture_output=True)  # fmt: skip
        statements = _statements(url)
        readers = {"pg_wire": _wire(url), "psycopg": _psycopg(url)}
        figures: dict[str, dict[str, list[float]]] = {k: {} for k in readers}
        for _ in range(args.rounds):
            for label, make in readers.items():  # alternated, round by round
                got = figures[label]
                got.setdefault("cpu", []).append(_cpu_per_query(make, statements))
                for threads in (1, 8):
                    got.setdefault(f"q/s {threads}", []).append(
                        _throughput(make, statements, threads, args.seconds)
                    )
        print(f"{len(statements)} statements; medians of {args.rounds} rounds")
        print(f"{'reader':10} {'CPU µs/query':>14} {'q/s, 1 thread':>15} {'q/s, 8 threads':>15}")
        for label, got in figures.items():
            print(f"{label:10} {statistics.median(got['cpu']):14.1f}"
                  f" {statistics.median(got['q/s 1']):15.0f} {statistics.median(got['q/s 8']):15.0f}")  # fmt: skip
        wire, pg = figures["pg_wire"], figures["psycopg"]
        print(f"ratio pg_wire/psycopg: CPU {statistics.median(wire['cpu']) / statistics.median(pg['cpu']):.2f},"
              f" q/s 1 thread {statistics.median(wire['q/s 1']) / statistics.median(pg['q/s 1']):.2f},"
              f" 8 threads {statistics.median(wire['q/s 8']) / statistics.median(pg['q/s 8']):.2f}")  # fmt: skip
    finally:
        with psycopg.connect(args.pg, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
