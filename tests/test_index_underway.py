"""`edukg index` while another process builds the same index (the load's own, in the
background): it waits for that one and then finishes, on both backends, with real
processes and the real model."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from edukg.cli import build_demo
from edukg.store import open_store
from harness.processes import EDUKG, stop

# A real index build, paused once it has written its first batch, until a line arrives on
# its stdin; then it finishes.
_PAUSED_INDEX = """
import sys
from edukg.ingest.index import build_index
from edukg.store import backend_of

indexer = backend_of(sys.argv[1]).indexer()
paused = []

def pause(done, total):
    if done > 0 and not paused:
        paused.append(True)
        print("indexing", flush=True)
        sys.stdin.readline()

try:
    summary = build_index(indexer, pause, workers=1, batch=20)
finally:
    indexer.close()
print("indexed", summary.rows, flush=True)
"""


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts: all stopped at its end, whatever happened."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        stop(proc)


def test_index_waits_for_the_one_underway(
    fresh_db: str, processes: list[subprocess.Popen[str]]
) -> None:
    """`edukg index` right after `edukg load` exited 1 ("…vectors.partial holds 1572864
    bytes, not 0 rows"), while the load's background index ran; it now says that one is
    running, waits for it, and ends with the index complete."""
    pytest.importorskip("onnxruntime", reason="the index needs the `index` extra")
    build_demo(fresh_db)
    first = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_INDEX, fresh_db],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    processes.append(first)
    assert first.stdout is not None and first.stdin is not None
    assert first.stdout.readline() == "indexing\n", "the first index ended before its pause"
    second = subprocess.Popen(
        [*EDUKG, "index", "--db", fresh_db],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    processes.append(second)
    assert second.stdout is not None
    said = second.stdout.readline()
    assert "another `edukg index` is building it" in said, said + second.stdout.read()
    first.stdin.write("\n")
    first.stdin.close()
    assert first.wait(timeout=300) == 0
    assert first.stdout.read().startswith("indexed ")
    rest = second.stdout.read()
    assert second.wait(timeout=300) == 0, said + rest
    assert "Semantic index complete" in rest, rest
    store = open_store(fresh_db, refresh=0)
    try:
        assert store.info() is not None
        assert store.indexing() is None  # complete: nothing under way
    finally:
        store.close()
