"""app/probes.py: the index build's progress as /healthz reports it, and word that a
killed build stopped (it used to report a growing estimate for ever)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from edukg.app.probes import IndexWatch
from edukg.ingest.builder import load
from edukg.store import open_store
from harness.processes import EDUKG, stop
from tests.support import SAMPLE


@pytest.mark.sample
def test_a_killed_index_build_is_reported_stopped_with_how_to_resume(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the index needs the `index` extra")
    if not (SAMPLE / "nodes.jsonl").is_file():
        pytest.skip(f"the real export sample is not at {SAMPLE}")
    db = tmp_path / "edukg.db"
    load([str(SAMPLE)], str(db), "1.0.0")
    build = subprocess.Popen([*EDUKG, "index", "--db", str(db)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    store = open_store(str(db))
    watch = IndexWatch(stall_seconds=1.0)
    try:
        deadline = time.monotonic() + 120
        while True:  # until the build has written some of the index
            found = store.indexing()
            if found is not None and found[0] > 0:
                break
            assert build.poll() is None and time.monotonic() < deadline, "no progress seen"
            time.sleep(0.05)
        build.send_signal(signal.SIGKILL)
        build.wait(timeout=30)
        first = watch.status(store)["indexing"]
        assert isinstance(first, dict) and "stopped" not in first
        time.sleep(1.2)
        later = watch.status(store)["indexing"]
        assert isinstance(later, dict) and later["stopped"] is True
        assert later["etaSeconds"] is None and "edukg index" in str(later["note"])
    finally:
        stop(build)
        store.close()
