"""The one loader of alignment's learned artifacts (the subject gate's weights, the
learned ranking stage's), which checks what it reads before a stage may use it.

An artifact is a JSON file in the package's model/ directory (or in `$EDUKG_ARTIFACTS`,
where an operator points at other ones). It is refused, never half used, when it is
missing, does not parse, or fails its stage's check (a shape, finite values, thresholds
in range): the stage then falls back as it does without it, and `/healthz` says which
artifact was refused and why (`status`). Each artifact's fingerprint (the first 12 hex
digits of its SHA-256) is part of the ranking's version.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")
PLACE = "EDUKG_ARTIFACTS"  # a directory holding artifacts to use instead of the package's


class Refused(ValueError):
    """An artifact that fails its check: the message says why."""


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """A checked artifact: what its stage made of it, and its fingerprint."""

    value: T
    fingerprint: str


_lock = threading.Lock()
_loaded: dict[str, Loaded[Any] | None] = {}
_refusals: dict[str, str] = {}


def load(name: str, check: Callable[[dict[str, Any]], T]) -> Loaded[T] | None:
    """The artifact `name` as `check` makes it (once per process), or None where it is
    missing or refused (the reason kept for `status`)."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        found: Loaded[T] | None = None
        try:
            raw = _read(name)
            found = Loaded(check(json.loads(raw)), hashlib.sha256(raw).hexdigest()[:12])
            _refusals.pop(name, None)
        except FileNotFoundError:
            _refusals[name] = "missing"
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            _refusals[name] = f"refused: {e}"
        _loaded[name] = found
        return found


def forget() -> None:
    """Read every artifact again on next use (tests, and a process that was handed
    other ones)."""
    with _lock:
        _loaded.clear()
        _refusals.clear()


def report() -> dict[str, dict[str, str]]:
    """Every artifact asked for so far: its fingerprint where in use, else why not."""
    with _lock:
        return {name: ({"fingerprint": found.fingerprint} if found is not None
                       else {"refused": _refusals.get(name, "missing")})
                for name, found in sorted(_loaded.items())}  # fmt: skip


def refusal(name: str) -> str | None:
    """Why `name` is not in use ("missing", or "refused: ..."), or None when it is."""
    return _refusals.get(name)


def _read(name: str) -> bytes:
    place = os.environ.get(PLACE)
    if place:
        return (Path(place) / name).read_bytes()
    return resources.files("edukg.model").joinpath(name).read_bytes()


def finite_vector(values: Any, length: int, what: str) -> Any:
    """`values` as a float32 vector of `length` finite numbers, else Refused."""
    import numpy as np  # noqa: PLC0415

    array = np.asarray(values, dtype=np.float32)
    if array.shape != (length,):
        raise Refused(f"{what} has shape {array.shape}, not ({length},)")
    if not np.isfinite(array).all():
        raise Refused(f"{what} holds a value that is not a finite number")
    return array


def finite_number(value: Any, what: str, low: float = -1e9, high: float = 1e9) -> float:
    """`value` as a float within [low, high], else Refused."""
    number = float(value)
    if not (low <= number <= high):  # also false for NaN
        raise Refused(f"{what} is {value!r}, not a number in [{low:g}, {high:g}]")
    return number
