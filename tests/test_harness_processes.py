"""The tests' own process handling (harness.processes): what a test starts is stopped,
with whatever runs under it, also when the process it started ignores the request."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from harness.processes import MARK, running, stop, strays, uptime

# A wrapper that outlives a plain stop, as strace does: it ignores SIGTERM and waits for
# its child (which prints its id and sleeps).
_WRAPPER = """
import signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
print(child.pid, flush=True)
child.wait()
"""

# A process that leaves a grandchild behind in a session of its own (as `edukg load`
# leaves its background index), then exits.
_DETACHING = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
"""


def test_stop_ends_the_processes_under_the_one_it_started() -> None:
    """A server started under strace stayed up after its test (strace was killed, the
    server carried on): stop now ends the whole tree."""
    proc = subprocess.Popen([sys.executable, "-c", _WRAPPER], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    try:
        stop(proc)
        assert proc.returncode is not None
        assert not running(child), "the wrapper's child outlived stop"
    finally:
        if running(child):
            os.kill(child, signal.SIGKILL)


def test_strays_are_the_marked_processes_no_longer_under_the_tests() -> None:
    since = uptime()
    done = subprocess.run([sys.executable, "-c", _DETACHING], capture_output=True, text=True,
                          check=True, env={**os.environ, MARK: os.environ[MARK]})  # fmt: skip
    orphan = int(done.stdout)
    try:
        found = strays(since)
        assert orphan in found, found
        assert os.getpid() not in found
        stop(orphan)
        assert not running(orphan)
        assert orphan not in strays(since)
    finally:
        if running(orphan):
            os.kill(orphan, signal.SIGKILL)


def test_the_mark_is_in_this_session(tmp_path: Path) -> None:
    assert os.environ.get(MARK)
