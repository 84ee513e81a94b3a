"""Load benchmark: time to load an export against the time merely to parse it.

    python -m bench.load [EXPORT_DIR]     (default: ../shared/data/kg-sample)

Prints the parse floor (orjson over every line of both files), the full load
into a fresh SQLite file, their ratio, the loader's peak RSS and the file size.
Both are measured in this run, on this machine, on the same files.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from harness.processes import EDUKG

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "data" / "kg-sample"


def parse_floor(export: Path) -> float:
    """Seconds to read and parse every line of both files, best of three."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for name in ("nodes.jsonl", "relationships.jsonl"):
            with open(export / name, "rb") as f:
                for line in f:
                    orjson.loads(line)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    export = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not (export / "nodes.jsonl").is_file():
        print(f"no export at {export}; pass a directory holding nodes.jsonl", file=sys.stderr)
        return 2
    floor = parse_floor(export)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        started = time.perf_counter()
        subprocess.run(
            [*EDUKG, "load", str(export), "--db", str(db), "--no-index"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size_mb = db.stat().st_size / 1e6
    print(f"export            {export}")
    print(f"parse floor       {floor:8.2f} s   (orjson, both files, best of 3)")
    print(f"edukg load        {seconds:8.2f} s   (process start to switch, incl. interpreter)")
    print(f"ratio             {seconds / floor:8.2f} x the parse floor")
    print(f"peak RSS (load)   {peak_mb:8.0f} MB")
    print(f"database file     {size_mb:8.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
