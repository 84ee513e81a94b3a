"""Where the worker processes of one server keep their metrics files (app/metrics.py
writes and reads them): a private directory that `edukg serve` makes as it starts and
removes as it stops, so that two servers of one database never count each other's
requests, and nothing predictable in a shared temporary directory is written through."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

log = logging.getLogger("edukg")


def private_dir() -> Path:
    """A new directory only this user may enter (0700), under the temporary directory."""
    return Path(tempfile.mkdtemp(prefix="edukg-metrics-"))


def usable(directory: Path) -> bool:
    """Whether `directory` is a real directory (not a link) that this user owns and no one
    else may enter: anything else is not written to (its figures would be another's to
    read, or its files replaceable)."""
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    mine = st.st_uid == os.getuid() if hasattr(os, "getuid") else True
    private = stat.S_ISDIR(st.st_mode) and not (st.st_mode & 0o077)
    if not (mine and private):
        log.warning("metrics directory %s is not a private directory of this user: not used",
                    directory)  # fmt: skip
        return False
    return True


def remove(directory: Path) -> None:
    """Remove a server's directory as it stops."""
    shutil.rmtree(directory, ignore_errors=True)
