"""Load time on PostgreSQL against SQLite, the same export, alternating, in one run.

    python -m bench.pg_load [--export DIR] [--rounds 3] [--before REV]

Each round loads the export (`edukg load --no-index`) into a fresh SQLite file and into a
fresh PostgreSQL database (PG_ADMIN's server, default the local one), and, with
`--before`, into PostgreSQL once more with an earlier revision of edukg (checked out
into a temporary worktree); prints medians and the PostgreSQL/SQLite ratio (target
<= 2).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import statistics
import sys
from pathlib import Path

from harness.revisions import checkout, load_seconds

ROOT = Path(__file__).resolve().parents[1]

PG_ADMIN = os.environ.get("EDUKG_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _fresh_pg(admin: object) -> str:
    name = f"edukg_loadbench_{secrets.token_hex(3)}"
    admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[attr-defined]
    return PG_ADMIN.rsplit("/", 1)[0] + "/" + name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(ROOT / ".bench" / "export"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="also load into PostgreSQL with this revision")
    args = parser.parse_args()
    export = Path(args.export)
    import psycopg

    admin = psycopg.connect(PG_ADMIN, autocommit=True)
    made: list[str] = []
    times: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack:
        versions = {"": ROOT / "src"}
        if args.before:
            versions["before "] = stack.enter_context(checkout(args.before))
        try:
            for n in range(args.rounds):
                times.setdefault("SQLite", []).append(load_seconds(ROOT / "src", export))
                for label, src in versions.items():
                    db = _fresh_pg(admin)
                    made.append(db.rsplit("/", 1)[1])
                    times.setdefault(f"{label}PostgreSQL", []).append(load_seconds(src, export, db))
                print(f"round {n + 1}: {times}", file=sys.stderr)
        finally:
            for name in made:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.close()
    medians = {label: statistics.median(values) for label, values in times.items()}
    for label, seconds in medians.items():
        ratio = seconds / medians["SQLite"]
        print(f"{label:<22} {seconds:7.1f} s   {ratio:5.2f}x SQLite   (rounds: "
              + ", ".join(f"{v:.1f}" for v in times[label]) + ")")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
