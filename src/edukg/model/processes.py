"""Processes of this machine: whether one still runs (a worker's metrics), and the files
and folders a live process holds (a load's build and downloads, an index being built).

What a process holds is told by a lock (`flock`) it keeps on the file for as long as it
works on it, not by the process id in the file's name: a process of another PID
namespace (a server container sharing a volume with a load container) sees other ids,
or none, but every process that opens the file sees its lock, and the kernel drops the
lock when the holder dies, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine (and PID namespace) with id `pid` still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


class Claim:
    """A file or folder this process holds: others see it as in use until `release`
    (or until this process ends)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Stop holding it (call once its path names something else, or nothing)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def claim(make: Callable[[], Path]) -> Claim:
    """Make a file or folder (`make` creates it and returns its path) and hold it.

    A process that found it unheld in the instant between its making and its locking may
    be removing it: then it is made again (`make` must pick the same name or a new one).
    """
    while True:
        path = make()
        fd = os.open(path, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits out a remover that holds it for a moment
        if _names(path, fd):
            return Claim(path, fd)
        os.close(fd)  # removed meanwhile: make it anew


def claim_file(path: Path) -> Claim:
    """Create the file `path` (empty, if it is not there) and hold it."""

    def make() -> Path:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        return path

    return claim(make)


def try_claim_file(path: Path) -> Claim | None:
    """Hold the file `path` (created empty if it is not there), or None at once when a
    live process holds it."""
    while True:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        if _names(path, fd):
            return Claim(path, fd)
        os.close(fd)  # removed by its last holder meanwhile: make it anew


def held(path: Path) -> bool:
    """Whether a live process holds `path` (False when it is not there)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # the lock, if this took it, goes with it
    return False


def remove_unheld(path: Path, remove: Callable[[Path], None] | None = None) -> bool:
    """Remove `path` (a file, or a folder with what it holds), or call `remove(path)`,
    unless a live process holds it; held meanwhile, so that no process claims it while
    it goes. Whether it was removed."""
    return _with_unheld(path, remove or _remove)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _with_unheld(path: Path, then: Callable[[Path], None]) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone, or not ours to read: not ours to remove either
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # held by a live process
        if not _names(path, fd):
            return False  # replaced since it was opened: look again another time
        then(path)
        return True
    finally:
        os.close(fd)


def _names(path: Path, fd: int) -> bool:
    """Whether `path` still names the file open as `fd`."""
    with contextlib.suppress(OSError):
        named, opened = os.stat(path), os.fstat(fd)
        return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
    return False
