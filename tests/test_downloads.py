"""Loads from URLs: a full disk, a trickling source, a size limit and the folders of a
killed load, each a clear LoadError (or a clean-up) and never a traceback."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edukg.ingest import reader
from edukg.ingest.builder import load
from edukg.ingest.errors import LoadError
from edukg.ingest.reader import DOWNLOAD_PREFIX, downloads
from harness.processes import EDUKG

BIG = 4 << 20  # bytes the "big" path answers


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        if self.path == "/trickle/nodes.jsonl":
            self.send_header("content-length", "1000000")
            self.end_headers()
            for _ in range(40):  # a byte every 0.1 s: each read in time, the whole never
                try:
                    self.wfile.write(b"{")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.1)
            return
        self.send_header("content-length", str(BIG))
        self.end_headers()
        try:
            for _ in range(BIG // 65536):
                self.wfile.write(b"\0" * 65536)
        except OSError:
            return

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def source() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_trickling_source_is_given_up(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "RATE_GRACE", 1.0)  # seconds, not a minute
    started = time.monotonic()
    with pytest.raises(LoadError, match="KiB/s a download must keep"):
        load([f"{source}/trickle/nodes.jsonl"], str(tmp_path / "t.db"), "1.0.0")
    assert time.monotonic() - started < 10
    assert not list(tmp_path.glob(f"{DOWNLOAD_PREFIX}*"))  # its folder is gone


def test_a_download_over_the_limit_stops(source: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [*EDUKG, "load", f"{source}/big/nodes.jsonl",
         "--db", str(tmp_path / "b.db"), "--max-download", "1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "larger than 1 MiB" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_full_disk_is_one_line(source: str, tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small filesystem")
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(tiny)],
                      capture_output=True, check=False).returncode != 0:  # fmt: skip
        pytest.skip("cannot mount a small tmpfs here")
    try:
        done = subprocess.run(
            [*EDUKG, "load", f"{source}/big/nodes.jsonl",
             "--db", str(tiny / "f.db")],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert "not enough free disk space" in done.stderr or "could not be written" in (
            done.stderr
        )
        assert "Traceback" not in done.stderr
        assert not list(tiny.glob(f"{DOWNLOAD_PREFIX}*"))
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def test_a_killed_loads_download_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    dead = tmp_path / f"{DOWNLOAD_PREFIX}999999999-abc"  # no process holds it
    dead.mkdir()
    (dead / "download-x-nodes.jsonl").write_bytes(b"{}")
    with downloads(tmp_path) as live:  # a load's, held while it runs: kept
        with pytest.raises(LoadError):
            load([str(tmp_path / "missing")], str(tmp_path / "k.db"), "1.0.0")
        assert not dead.exists() and live.exists()
