"""Processes of this machine: whether one still runs (a load's claim, a worker's metrics)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine with id `pid` still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True
