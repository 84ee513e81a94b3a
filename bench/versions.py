"""Before and after: the serve and load figures of an earlier revision against this tree.

    python -m bench.versions REV [--export DIR] [--rounds 3] [--seconds 8]

Checks REV out into a temporary worktree and runs both versions from the same virtual
environment (each with its own `src` first on PYTHONPATH), alternating them round by
round so that a noisy machine weighs on both alike; prints medians and after/before
ratios. Serve: one worker pinned to core 0, wrk on core 1, 32 connections, the request
mix of bench/serve.py, with the response cache off (the database path) and on. Load:
`edukg load --no-index` of the export into a fresh directory. Needs wrk and taskset.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.serve import mix
from harness.load import wrk
from harness.processes import EDUKG, free_port, tree_env, wait_port
from harness.revisions import checkout, cli, load_seconds

ROOT = Path(__file__).resolve().parents[1]


def _serve_rps(src: Path, db: str, key: str, paths: list[str], seconds: int, cache: bool) -> float:
    port = free_port()
    extra = [] if cache else ["--response-cache-mb", "0"]
    proc = subprocess.Popen(
        ["taskset", "-c", "0", *EDUKG, "serve", "--db", db,
         "--port", str(port), "--no-access-log", *extra],
        env=tree_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_port(port)
        return wrk(f"http://127.0.0.1:{port}", paths, {"x-api-key": key}, seconds)["rps"]
    finally:
        proc.terminate()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("--export", default=str(ROOT / ".bench" / "export"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    export = Path(args.export)
    with tempfile.TemporaryDirectory() as tmp, checkout(args.rev) as before:
        versions = {"before": before, "after": ROOT / "src"}
        db = str(Path(tmp) / "serve.db")
        cli(versions["after"], "load", str(export), "--db", db, "--no-index")
        key = cli(versions["after"], "keys", "create", "bench", "--rate", "0", "--db", db)
        token = key.stdout.splitlines()[-1]
        paths = [path for _, weight, path, _ in mix(db) for _ in range(weight)]
        figures: dict[str, dict[str, list[float]]] = {v: {} for v in versions}
        for n in range(args.rounds):
            order = list(versions) if n % 2 == 0 else list(reversed(versions))
            for name in order:
                src, row = versions[name], figures[name]
                row.setdefault("load s", []).append(load_seconds(src, export))
                for cache in (False, True):
                    label = "serve req/s, cache " + ("on" if cache else "off")
                    rps = _serve_rps(src, db, token, paths, args.seconds, cache)
                    row.setdefault(label, []).append(rps)
            print(f"round {n + 1}: {figures}", file=sys.stderr)
    print(f"{'median of ' + str(args.rounds):<28}{'before':>12}{'after':>12}{'after/before':>14}")
    for label in figures["before"]:
        b = statistics.median(figures["before"][label])
        a = statistics.median(figures["after"][label])
        print(f"{label:<28}{b:>12.1f}{a:>12.1f}{a / b:>14.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
