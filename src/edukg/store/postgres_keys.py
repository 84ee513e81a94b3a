"""API keys on PostgreSQL, remembered by each node until the key store's revision moves.

A key check is a round trip; remembering verified keys saves it, but a revoke must
still hold from the next request on, on every node. So `create` and `revoke` move a
revision counter (`edukg.key_revision`), a remembered key is trusted only at the
revision it was verified at, and every request reads the current revision: in the
same round trip as its first data query when keys and data share a database (libpq's
pipeline mode, store.pg_wire), else on its own. A key verified afresh needs no second
look; a key known to be wrong stays wrong (keys are random), so it costs no query.
"""

from __future__ import annotations

import hmac
import threading
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from edukg.store import pg_wire
from edukg.store.base import Principal, StoreUnavailable
from edukg.store.keys import KeyStoreBase
from edukg.store.pg_common import WAIT, Connections, ensure_meta, pool
from edukg.store.pg_wire import REVISION_SQL, Unavailable, WireReader

_VERIFY_SQL = (
    "SELECT k.name, k.digest, k.rate, k.burst, r.revision FROM edukg.key_revision r"
    " LEFT JOIN edukg.api_keys k ON k.digest = %s AND k.revoked_at IS NULL WHERE r.id = 1"
)
_VERIFIED_MAX = 10_000
_REFUSED_MAX = 4_096


class PostgresKeyStore(Connections, KeyStoreBase):
    """API keys in `edukg.api_keys`, always on the primary."""

    keys_table = "edukg.api_keys"
    mark = "%s"
    secret_table = "edukg.secret"  # noqa: S105 - a table name

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()
        self._wire = WireReader.shared(url, WAIT)
        self._released = False
        self._verified: dict[str, tuple[Principal, int]] = {}
        self._refused: dict[str, None] = {}

    def verify(self, key: str) -> Principal | None:
        """Who holds the live key `key`, or None; a remembered key is trusted until
        `confirm` has seen the request's revision."""
        request = pg_wire.revision
        request.pending = None
        known = self._verified.get(key)
        if known is not None:
            request.pending = (key, known[1])
            request.url, request.seen = self._url, None
            return known[0]
        if key in self._refused:
            return None
        rows = self._select(_VERIFY_SQL, (self._digest(key),))
        name, digest, rate, burst, revision = rows[0]
        principal = None
        if name is not None and hmac.compare_digest(bytes(digest), self._digest(key)):
            principal = Principal(str(name), rate, burst)
            if len(self._verified) < _VERIFIED_MAX:
                self._verified[key] = (principal, int(revision))
        else:
            if len(self._refused) >= _REFUSED_MAX:
                self._refused.pop(next(iter(self._refused)), None)
            self._refused[key] = None
        return principal

    def confirm(self) -> bool:
        """Whether the key `verify` last accepted on this thread is still live, at the
        revision this request read (with its data, or now)."""
        request = pg_wire.revision
        pending, request.pending = request.pending, None
        if pending is None:
            return True
        key, remembered = pending
        seen = request.seen
        if seen is None and self._wire.quiet:
            # PostgreSQL may be frozen: no revoke commits there meanwhile, and a request
            # that needs no data (a cached answer) should not wait on it.
            return True
        if seen is None:
            seen = int(self._select(REVISION_SQL, ())[0][0])
        if seen == remembered:
            return True
        self._verified = {k: v for k, v in self._verified.items() if v[1] == seen}
        self._verified.pop(key, None)
        return self.verify(key) is not None

    def _changed(self) -> None:
        """Move the revision: every node re-checks the keys it remembers (this one, which
        made the change, forgets them at once)."""
        self._execute("UPDATE edukg.key_revision SET revision = revision + 1 WHERE id = 1", ())
        self._verified = {}

    def _connection(self) -> Any:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    try:
                        with psycopg.connect(
                            self._url, autocommit=True, connect_timeout=WAIT
                        ) as conn:
                            ensure_meta(conn)
                    except psycopg.OperationalError as exc:
                        raise StoreUnavailable(str(exc)) from None
                    self._pool = pool(self._url)
        return self._pool.connection()

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        try:
            with self._connection() as conn:
                cursor = conn.execute(sql, params)
                return cursor.fetchall() if cursor.description else cursor.rowcount
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailable(str(exc)) from None

    def _one(self, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        rows = self._select(sql, params)
        return rows[0] if rows else None

    def _all(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._select(sql, params)

    def _select(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Reads (every request's key check) through the lean connection (pg_wire)."""
        if self._pool is None:
            with self._connection():  # the `edukg` schema, made once
                pass
        try:
            return self._wire.query(sql, list(params))
        except Unavailable as exc:
            raise StoreUnavailable(str(exc)) from None

    def _run(self, sql: str, params: tuple[Any, ...]) -> int:
        return int(self._execute(sql, params))
