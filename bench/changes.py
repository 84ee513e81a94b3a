"""The change feed at full scale: how long computing the changes of two releases takes,
the memory it needs and the disk the kept changes take.

    python -m bench.changes [--export DIR] [--pg URL] [--edits 3000]

Release 1.0.0 is the export (the full-scale generated one by default); release 2.0.0 is
a copy with about `--edits` records changed: standards reworded, removed (with their
relationships) and added, crosswalk scores changed, and every hasChild identifier
renewed (as the real export does). Both are loaded into a fresh SQLite location (and a
fresh PostgreSQL database with `--pg`): the second load computes the changes from the
first, and its summary says how long that took. Then `edukg diff 2.0.0 1.0.0`, a pair no
load computed, runs as the server's background job does; its time and peak memory
(ru_maxrss of that process) are printed, with the disk the kept changes take.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson

from edukg.cli.output import size_text
from harness.processes import EDUKG

ROOT = Path(__file__).resolve().parents[1]


def _edited(export: Path, out: Path, edits: int) -> None:
    """A copy of `export` with about `edits` records changed, and every hasChild renewed."""
    out.mkdir(parents=True, exist_ok=True)
    per = edits // 4
    gone: set[str] = set()
    with open(export / "nodes.jsonl", "rb") as src, open(out / "nodes.jsonl", "wb") as dst:
        standards = 0
        last = b""
        for read in src:
            line = read
            if b'"StandardsFrameworkItem"' in line:
                standards += 1
                if standards % 50 == 0 and len(gone) < per // 2:
                    gone.add(orjson.loads(line)["identifier"])
                    continue
                if standards % 50 == 1 and standards // 50 < per:
                    record = orjson.loads(line)
                    record["properties"]["description"] = "Reworded. " + str(
                        record["properties"].get("description")
                    )
                    line = orjson.dumps(record) + b"\n"
                last = line
            dst.write(line)
        template = orjson.loads(last)
        for n in range(per // 2):  # added standards
            template["identifier"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-added-{n}"))
            template["properties"]["statementCode"] = f"NEW.{n}"
            dst.write(orjson.dumps(template) + b"\n")
    rescored = 0
    with (
        open(export / "relationships.jsonl", "rb") as src,
        open(out / "relationships.jsonl", "wb") as dst,
    ):
        for read in src:
            line = read
            if _ends(line) & gone:
                continue
            if b'"hasChild"' in line or (b'"hasStandardAlignment"' in line and rescored < per):
                record = orjson.loads(line)
                if record["label"] == "hasChild":
                    record["identifier"] = str(uuid.uuid4())
                else:
                    rescored += 1
                    record["properties"]["jaccard"] = "0.0123"
                line = orjson.dumps(record) + b"\n"
            dst.write(line)


_END = re.compile(rb'"(?:source|target)_identifier":"([^"]+)"')


def _ends(line: bytes) -> set[str]:
    return {m.decode() for m in _END.findall(line)}


# `edukg` that prints its own peak resident KiB last on stderr.
_MEASURED = [sys.executable, "-c", "import resource, sys; from edukg.cli import main; rc = main("
             "sys.argv[1:]); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
             " file=sys.stderr); sys.exit(rc)"]  # fmt: skip


def _run(args: list[str]) -> tuple[float, str, int]:
    """Seconds, stdout, and the peak resident KiB the command printed (else 0)."""
    started = time.monotonic()
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    took = time.monotonic() - started
    last = (done.stderr.strip().splitlines() or ["0"])[-1]
    return took, done.stdout, int(last) if last.isdigit() else 0


def _measure(db: str, first: Path, second: Path, where: str, disk: Path | None) -> None:
    load1, _, _ = _run([*EDUKG, "load", str(first), "--db", db, "--data-version", "1.0.0",
                        "--no-index"])  # fmt: skip
    load2, out, _ = _run([*EDUKG, "load", str(second), "--db", db, "--data-version", "2.0.0",
                          "--no-index"])  # fmt: skip
    line = next((x for x in out.splitlines() if x.startswith("changes from")), "(none)")
    print(f"{where}: load 1.0.0 {load1:.1f} s, load 2.0.0 {load2:.1f} s; {line}")
    took, _, peak = _run([*_MEASURED, "diff", "2.0.0", "1.0.0", "--quiet", "--db", db])
    shown = f"{peak / 1024:.0f} MiB"
    print(f"{where}: diff 2.0.0 -> 1.0.0 (a pair no load computed) {took:.1f} s, peak RSS {shown}")
    _, table, _ = _run([*EDUKG, "diff", "1.0.0", "2.0.0", "--db", db])
    print(table)
    if disk is not None:
        size = disk.stat().st_size
    else:
        import psycopg

        with psycopg.connect(db) as conn:
            row = conn.execute("SELECT pg_total_relation_size('edukg.changes')").fetchone()
            size = int(row[0]) if row else 0
    print(f"{where}: kept changes on disk (both pairs): {size_text(size)}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", default=str(ROOT / ".bench" / "export"))
    parser.add_argument("--pg", default=None, help="postgresql:// URL of an empty database")
    parser.add_argument("--edits", type=int, default=3000)
    args = parser.parse_args()
    export = Path(args.export)
    if not (export / "nodes.jsonl").is_file():
        subprocess.run([*EDUKG, "generate", str(export), "--scale", "full", "--seed", "7"],
                       check=True)  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="edukg-changes-", dir=ROOT / ".bench"))
    try:
        started = time.monotonic()
        _edited(export, tmp / "v2", args.edits)
        print(f"wrote the edited release in {time.monotonic() - started:.1f} s")
        db = str(tmp / "edukg.db")
        _measure(db, export, tmp / "v2", "SQLite", Path(f"{db}.changes"))
        if args.pg:
            _measure(args.pg, export, tmp / "v2", "PostgreSQL", None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
