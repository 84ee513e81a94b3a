"""What a load leaves while it runs, and what a load that was killed left: `edukg serve`
removes the second as it starts and never the first, whichever PID namespace it runs in
(a server container sharing a volume with a load container), against real processes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from edukg.cli import build_demo
from edukg.ingest.demo import demo_lines
from edukg.store import open_store
from harness.exports import write_export
from harness.processes import EDUKG, free_port, stop, wait_for

# A real `edukg load`, paused at its first progress report (its build and download
# folder made and open) until a line arrives on its stdin; then it finishes.
_PAUSED_LOAD = """
import sys
from edukg.ingest.builder import load

paused = []

def pause(done, total, label):
    if not paused:
        paused.append(True)
        print("building", flush=True)
        sys.stdin.readline()

summary = load([sys.argv[1]], sys.argv[2], data_version="9.9.9", progress=pause)
print("loaded", summary.data_version, flush=True)
"""


@dataclass
class PausedLoad:
    """A load in progress, paused, and the files it had made when it paused."""

    proc: subprocess.Popen[str]
    files: list[Path]

    def finish(self) -> str:
        """Let it go on; its output once it has ended (it must end well)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.close()
        out = self.proc.stdout.read()
        assert self.proc.wait(timeout=120) == 0, out
        return out


def _in_another_namespace() -> list[str]:
    """The command prefix that runs a process in a PID namespace of its own."""
    reason = ""
    if shutil.which("unshare") is None:
        reason = "unshare is not installed"
    else:
        probe = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "true"],
            check=False,
            capture_output=True,
            text=True,
        )
        reason = probe.stderr.strip() if probe.returncode else ""
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"a PID namespace (unshare --pid) is required under CI=true: {reason}")
        pytest.skip(f"cannot make a PID namespace: {reason}")
    # --kill-child: the server goes when unshare does (harness.processes.stop ends both).
    return ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM"]


@pytest.fixture(params=["same", "other"], ids=["same-namespace", "other-pid-namespace"])
def namespace(request: pytest.FixtureRequest) -> list[str]:
    """The prefix of the server's command: none, or a PID namespace of its own."""
    return [] if request.param == "same" else _in_another_namespace()


@pytest.fixture
def paused_load(tmp_path: Path) -> Iterator[Callable[[str], PausedLoad]]:
    """Start `edukg load` of the demo export into a database and pause it mid-build."""
    started: list[subprocess.Popen[str]] = []

    def start(db: str) -> PausedLoad:
        before = _leftovers(tmp_path)
        export = write_export(tmp_path / "export", list(demo_lines()))
        proc = subprocess.Popen(
            [sys.executable, "-c", _PAUSED_LOAD, str(export), db],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env(tmp_path),
        )  # fmt: skip
        started.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline() == "building\n", "the load ended before it built"
        return PausedLoad(proc, sorted(set(_leftovers(tmp_path)) - set(before)))

    yield start
    for proc in started:
        stop(proc)


def _env(tmp_path: Path) -> dict[str, str]:
    # PostgreSQL's loads build and download in the temporary folder: this test's own.
    return {**os.environ, "TMPDIR": str(tmp_path)}


def _leftovers(folder: Path) -> list[Path]:
    """What loads make in `folder` while they run (their builds, their downloads)."""
    marks = ("*.building-*", ".edukg-download-*", "edukg-pg-build-*")
    return sorted(path for mark in marks for path in folder.rglob(mark))


def _dead_leftovers(folder: Path, db: Path | None) -> list[Path]:
    """What a killed load would have left: files no live process holds."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    made = [folder / f".edukg-download-{gone.pid}-abc"]
    if db is None:
        made.append(folder / f"edukg-pg-build-{gone.pid}-def")
    for path in made:
        path.mkdir()
        (path / "nodes.jsonl").write_text("{}\n")
    if db is not None:
        build = db.with_name(f"{db.name}.building-{gone.pid}-1f2e")
        build.write_bytes(b"partial build")
        Path(f"{build}.lines").write_bytes(b"{}\n")
        made += [build, Path(f"{build}.lines")]
    return made


def _serve_once(db: str, prefix: list[str], tmp_path: Path) -> None:
    """Start `edukg serve` (after `prefix`), wait for it to answer, and stop it."""
    port = free_port()
    proc = subprocess.Popen(
        [*prefix, *EDUKG, "serve", "--db", db, "--port", str(port), "--no-access-log"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(tmp_path),
    )  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", proc, seconds=60)
    finally:
        stop(proc)


def test_serve_removes_only_what_dead_loads_left_sqlite(
    tmp_path: Path, namespace: list[str], paused_load: Callable[[str], PausedLoad]
) -> None:
    """A server in another PID namespace removed both `*.building-*` files of a live
    load within 3 s (`os.kill(pid, 0)` cannot see a process of another namespace), and
    the load failed. A live load's files are now told by the lock it holds on them."""
    db = tmp_path / "data" / "edukg.db"
    db.parent.mkdir()
    build_demo(str(db))
    dead = _dead_leftovers(db.parent, db)
    load = paused_load(str(db))
    assert any(".building-" in p.name for p in load.files), load.files
    assert any(".edukg-download-" in p.name for p in load.files), load.files
    _serve_once(str(db), namespace, tmp_path)
    assert [p for p in dead if p.exists()] == []
    assert [p for p in load.files if not p.exists()] == []
    assert "loaded 9.9.9" in load.finish()
    store = open_store(str(db), refresh=0)
    try:
        info = store.info()
        assert info is not None and info.data_version == "9.9.9"
    finally:
        store.close()


def test_serve_removes_only_what_dead_loads_left_postgres(
    tmp_path: Path,
    namespace: list[str],
    paused_load: Callable[[str], PausedLoad],
    postgres: Callable[[str], str],
) -> None:
    """The same on PostgreSQL: a load's private build folder and its download folder (in
    the temporary folder) are kept while it runs, and removed once it is gone."""
    url = postgres("leftovers")
    dead = _dead_leftovers(tmp_path, None)
    load = paused_load(url)
    assert any("edukg-pg-build-" in p.name for p in load.files), load.files
    assert any(".edukg-download-" in p.name for p in load.files), load.files
    _serve_once(url, namespace, tmp_path)
    assert [p for p in dead if p.exists()] == []
    assert [p for p in load.files if not p.exists()] == []
    assert "loaded 9.9.9" in load.finish()
