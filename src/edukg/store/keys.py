"""API keys, the same on every backend: HMAC-SHA256 digests, one live key per name.

A key is shown once, when made; only its digest is stored. The HMAC secret is made
once per key store, so a leaked digest table alone does not let anyone test
guesses offline. Lookups go by digest; the final comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from edukg.model.clock import utc_timestamp
from edukg.model.lru import Recent
from edukg.store.base import KeyInfo, Principal

_KEY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KEY_PREFIX = "ekg_"


class KeyNameError(ValueError):
    """A key operation that cannot be done (a bad or taken name, a bad limit)."""


_LIVE_MAX = 10_000  # live keys remembered (only live ones: guesses cannot fill it)
_REFUSED_MAX = 4_096  # wrong keys remembered, oldest forgotten first


class Verdicts:
    """What a key store remembers of the keys it has checked, while the key store's
    revision stays where it was: live keys, and wrong ones (keys are random: a wrong key
    stays wrong, so it costs a lookup, not a query). The one verdict cache of every
    backend."""

    def __init__(self) -> None:
        self.revision: object = None
        self.live: dict[str, Principal] = {}
        self.refused: Recent[str, bool] = Recent(_REFUSED_MAX)

    def at(self, revision: object) -> None:
        """Forget everything when the key store has moved to another revision."""
        if revision != self.revision:
            self.forget()
            self.revision = revision

    def forget(self) -> None:
        """Forget every verdict (a key made or revoked here, a key store replaced)."""
        self.live = {}
        self.refused = Recent(_REFUSED_MAX)

    def remember(self, key: str, principal: Principal | None) -> None:
        """Keep a fresh verdict."""
        if principal is not None:
            if len(self.live) < _LIVE_MAX:
                self.live[key] = principal
        else:
            self.refused.put(key, True)


class KeyStoreBase(ABC):
    """The key logic; a backend supplies three ways to run SQL, its table names and,
    to remember verdicts, its revision (`_revision`)."""

    keys_table = "api_keys"
    secret_table = "secret"  # noqa: S105 - a table name
    mark = "?"  # the driver's parameter mark

    def __init__(self, recheck: float = 0.0) -> None:
        self._secret = b""
        self._derived: dict[bytes, tuple[bytes, bytes]] = {}  # purpose -> (secret, derived)
        self._verdicts = Verdicts()
        self._recheck = recheck  # seconds a look at the revision holds (0: every verify)
        self._next_look = 0.0

    @abstractmethod
    def _one(self, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None: ...

    @abstractmethod
    def _all(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def _run(self, sql: str, params: tuple[Any, ...]) -> int:
        """Run a statement; return the number of rows it changed."""

    def _load_secret(self) -> None:
        if not self._secret:
            self._run(
                f"INSERT INTO {self.secret_table} (id, value) VALUES (1, {self.mark})"
                " ON CONFLICT (id) DO NOTHING",
                (secrets.token_bytes(32),),
            )
            row = self._one(f"SELECT value FROM {self.secret_table} WHERE id = 1", ())
            assert row is not None
            self._secret = bytes(row[0])

    def derived_secret(self, purpose: bytes) -> bytes:
        """A secret for `purpose`, derived from this store's own (shared by its nodes)."""
        self._load_secret()
        known = self._derived.get(purpose)
        if known is None or known[0] != self._secret:
            known = (self._secret, hmac.new(self._secret, b"edukg:" + purpose, "sha256").digest())
            self._derived[purpose] = known
        return known[1]

    def _digest(self, key: str) -> bytes:
        self._load_secret()
        return hmac.new(self._secret, key.encode("utf-8", "replace"), hashlib.sha256).digest()

    def create(
        self,
        name: str,
        rate: float | None = None,
        burst: int | None = None,
        metrics: bool = False,
    ) -> str:
        """Make a live key named `name` (with its own rate limit, if given; `metrics`: it
        may read /metrics) and return it."""
        if not _KEY_NAME.match(name):
            raise KeyNameError(
                "a key name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        if (rate is not None and rate < 0) or (burst is not None and burst < 1):
            raise KeyNameError("--rate must be 0 (unlimited) or more, --burst 1 or more")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        digest = self._digest(key)
        if self._one(
            f"SELECT 1 FROM {self.keys_table} WHERE name = {self.mark} AND revoked_at IS NULL",
            (name,),
        ):
            raise KeyNameError(f"a live key named {name!r} exists; revoke it first")
        self._run(
            f"INSERT INTO {self.keys_table} (name, digest, last4, created_at, rate, burst,"
            f" metrics) VALUES ({', '.join([self.mark] * 7)})",
            (name, digest, key[-4:], utc_timestamp(), rate, burst, metrics),
        )
        self._changed()
        return key

    def verify(self, key: str) -> Principal | None:
        """Who holds the live key `key`, or None: remembered while the key store's
        revision stays (looked at, at most every `recheck` seconds), else looked up."""
        now = time.monotonic()  # no system call: the kernel's clock page
        if now >= self._next_look:
            self._verdicts.at(self._revision())
            self._next_look = now + self._recheck
        verdicts = self._verdicts
        known = verdicts.live.get(key)
        if known is not None:
            return known
        if key in verdicts.refused:
            return None
        principal = self._lookup(key)
        verdicts.remember(key, principal)
        return principal

    def look(self, hold: float) -> None:
        """Look at the key store's revision now, and let `verify` rely on it for `hold`
        seconds: a server looks ahead of its requests (app/watch.py) instead of inside one."""
        self._verdicts.at(self._revision())
        self._next_look = time.monotonic() + hold

    def _revision(self) -> object:
        """Where the key store is now: verdicts hold while it stays (None: always)."""
        return None

    def _lookup(self, key: str) -> Principal | None:
        digest = self._digest(key)
        row = self._one(
            f"SELECT name, digest, rate, burst, metrics FROM {self.keys_table}"
            f" WHERE digest = {self.mark} AND revoked_at IS NULL",
            (digest,),
        )
        if row is None or not hmac.compare_digest(bytes(row[1]), digest):
            return None
        return Principal(str(row[0]), row[2], row[3], bool(row[4]))

    def confirm(self) -> bool:
        """Whether the key last accepted is still live: `verify` decided it."""
        return True

    def _changed(self) -> None:
        """Called after a key is made or revoked here: this process's verdicts go (a
        backend shared by several nodes also moves its revision)."""
        self._verdicts.forget()

    def list(self) -> list[KeyInfo]:
        """All keys, oldest first."""
        rows = self._all(
            f"SELECT name, created_at, last4, revoked_at, rate, burst, metrics"
            f" FROM {self.keys_table} ORDER BY created_at, digest",
            (),
        )
        return [
            KeyInfo(name, created, last4, revoked, rate, burst, bool(metrics))
            for name, created, last4, revoked, rate, burst, metrics in rows
        ]

    def revoke(self, name: str) -> bool:
        """Revoke the live key `name`."""
        changed = self._run(
            f"UPDATE {self.keys_table} SET revoked_at = {self.mark}"
            f" WHERE name = {self.mark} AND revoked_at IS NULL",
            (utc_timestamp(), name),
        )
        if changed:
            self._changed()
        return changed > 0


def keys_path_for(db: str) -> Path:
    """The API-key file that belongs to a SQLite data file (`x.db` -> `x.keys.db`).

    Keys live apart from the graph data so that a reload, which replaces the data
    file, can never lose or resurrect a key.
    """
    path = Path(db)
    if path.suffix:
        return path.with_name(f"{path.stem}.keys{path.suffix}")
    return path.with_name(f"{path.name}.keys")
