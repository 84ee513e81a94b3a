"""An earlier revision beside this tree: checked out into a temporary worktree, and the
command line of either run against it (benchmarks alternate the two in one run)."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from harness.processes import EDUKG, ROOT, tree_env


def cli(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`edukg ARGS` with the edukg at `src` (a checkout's src/), which must succeed."""
    return subprocess.run([*EDUKG, *args], env=tree_env(src), check=True, capture_output=True,
                          text=True)  # fmt: skip


def load_seconds(src: Path, export: Path, db: str | None = None) -> float:
    """Seconds for `edukg load --no-index` of `export` with the edukg at `src` (into `db`,
    else a fresh SQLite file)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        cli(src, "load", str(export), "--db", db or str(Path(tmp) / "bench.db"), "--no-index")
        return time.perf_counter() - started


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """The `src` directory of `rev`, checked out into a temporary worktree meanwhile."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree),
                        rev], check=True)  # fmt: skip
        try:
            yield tree / "src"
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)  # fmt: skip
