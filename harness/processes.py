"""Real processes for the tests and the benchmarks: a free port, the command line as a
user runs it, and a server process waited for and stopped (with whatever runs under it).
The one definition of each.

A test run marks its processes: `MARK` in their environment (tests/conftest.py sets it),
so that what a test left running with no parent among the tests (a server under a
wrapper that was killed, a load's background index) can be found and stopped (`strays`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EDUKG = [sys.executable, "-m", "edukg.cli"]  # the command line, as `edukg` runs it


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tree_env(src: Path | None = None, **more: str) -> dict[str, str]:
    """This environment, with the edukg at `src` (a checkout's src/) first on the path."""
    env = {**os.environ, **more}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def edukg(
    *args: str,
    src: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    check: bool = False,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `edukg ARGS` to the end (text output captured); `src`: another checkout's."""
    return subprocess.run(
        [*EDUKG, *args],
        input=stdin,
        env=_marked(env) if env is not None else tree_env(src),
        capture_output=True,
        text=True,
        check=check,
        timeout=timeout,
    )


def wait_port(port: int, seconds: float = 30, proc: subprocess.Popen[str] | None = None) -> None:
    """Wait until something accepts connections on `port` (fails if `proc` exits first)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"the server exited: {out}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answered on port {port}")


def wait_for(url: str, proc: subprocess.Popen[str], seconds: float = 20) -> None:
    """Wait until `url` answers HTTP at all (fails if `proc` exits first)."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"server exited: {proc.stdout.read() if proc.stdout else ''}"
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer")


def stop(proc: subprocess.Popen[Any] | int, grace: float = 3.0) -> None:
    """Stop a process (one this process started, or any by its id) and every process under
    it: SIGTERM to it; after `grace` seconds, SIGTERM to whatever of them still runs (a
    wrapper such as strace ignores the first and waits for its child); after 10 s more,
    SIGKILL. A started process's pipes are closed."""
    root = _Started(proc) if isinstance(proc, subprocess.Popen) else _Seen.of(proc)
    under: list[_Handle] = list(_under(root.pid, _table())) if root is not None else []
    if root is not None:
        root.signal(signal.SIGTERM)
        _wait_gone([root], grace)
        everyone = [root, *under]
        for seconds, sig in ((10.0, signal.SIGTERM), (10.0, signal.SIGKILL)):
            for handle in everyone:
                if not handle.gone():
                    handle.signal(sig)
            if _wait_gone(everyone, seconds):
                break
    if isinstance(proc, subprocess.Popen):
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


MARK = "EDUKG_TEST_SESSION"  # in the environment of every process a test run starts


def uptime() -> float:
    """Seconds since the machine started (what process start times count from)."""
    return float(Path("/proc/uptime").read_text().split()[0])


def running(pid: int) -> bool:
    """Whether the process `pid` runs (a zombie, dead and not yet reaped, does not)."""
    seen = _Seen.of(pid)
    return seen is not None and not seen.gone()


def strays(since: float) -> list[int]:
    """Processes of this test run (`MARK` in their environment), started `since` (uptime
    seconds) or later, that no longer run under this process: left behind."""
    mark = os.environ.get(MARK)
    if not mark or not Path("/proc/self/stat").exists():
        return []
    table = _table()
    ours = {os.getpid(), *(seen.pid for seen in _under(os.getpid(), table))}
    tick = os.sysconf("SC_CLK_TCK")
    wanted = f"{MARK}={mark}".encode()
    found = []
    for seen in table.values():
        if seen.pid in ours or seen.started < since * tick - 1:
            continue
        try:
            environment = Path(f"/proc/{seen.pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if wanted in environment:
            found.append(seen.pid)
    return found


def _marked(env: Mapping[str, str]) -> dict[str, str]:
    mark = os.environ.get(MARK)
    return {**env, MARK: mark} if mark else dict(env)


class _Handle:
    pid: int

    def gone(self) -> bool:
        raise NotImplementedError

    def signal(self, sig: int) -> None:
        raise NotImplementedError


class _Started(_Handle):
    """A process this one started: waited for (reaped) as it ends."""

    def __init__(self, proc: subprocess.Popen[Any]) -> None:
        self.proc = proc
        self.pid = proc.pid

    def gone(self) -> bool:
        return self.proc.poll() is not None

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)  # nothing, once it has been reaped


@dataclass(frozen=True)
class _Seen(_Handle):
    """A process as /proc shows it; its start time tells it from a later one of its id."""

    pid: int
    parent: int
    started: int  # clock ticks after boot
    state: str

    @classmethod
    def of(cls, pid: int) -> _Seen | None:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = text[text.rindex(")") + 2 :].split()  # the name may hold spaces
        return cls(pid, int(fields[1]), int(fields[19]), fields[0])

    def gone(self) -> bool:
        now = _Seen.of(self.pid)
        return now is None or now.started != self.started or now.state in "ZX"

    def signal(self, sig: int) -> None:
        if not self.gone():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)


def _table() -> dict[int, _Seen]:
    """Every process /proc shows now (none where there is no /proc)."""
    table = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit() and (seen := _Seen.of(int(name))) is not None:
                table[seen.pid] = seen
    return table


def _under(pid: int, table: dict[int, _Seen]) -> list[_Seen]:
    """The processes under `pid`: its children, theirs, and so on."""
    children: dict[int, list[_Seen]] = {}
    for seen in table.values():
        children.setdefault(seen.parent, []).append(seen)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child.pid)
    return found


def _wait_gone(handles: list[_Handle], seconds: float) -> bool:
    """Wait until every one of `handles` is gone, at most `seconds`: whether they are."""
    deadline = time.monotonic() + seconds
    while not all(handle.gone() for handle in handles):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
