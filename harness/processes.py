"""Real processes for the tests and the benchmarks: a free port, the command line as a
user runs it, and a server process waited for and stopped. The one definition of each."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

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
        env=dict(env) if env is not None else tree_env(src),
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


def stop(proc: subprocess.Popen[str]) -> None:
    """Terminate a process (killed after 10 s) and close its output."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()
