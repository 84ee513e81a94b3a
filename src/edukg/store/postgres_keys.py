"""API keys on PostgreSQL, remembered by each node until the key store's revision moves.

A key check is a round trip; remembering verified keys saves it, but a revoke must
still hold on every node. So `create` and `revoke` move a revision counter
(`edukg.key_revision`), and a node reads it at most every `recheck` seconds (servers:
store.LOCAL_RECHECK), forgetting what it remembers when it has moved: a revoke holds
on every node from that long after it. A key known to be wrong stays wrong (keys are
random), so it costs no query. While PostgreSQL does not answer (store.pg_wire's
heartbeat), no revoke can commit there, so remembered verdicts stand.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg

from edukg.store.base import STATEMENT_SECONDS, StoreUnavailable
from edukg.store.errors import REQUEST_DEADLINE, KeyCheckTimeout, StatementTimeout
from edukg.store.keys import KeyStoreBase
from edukg.store.pg_common import WAIT, Connections, LazyPool, ensure_meta
from edukg.store.pg_wire import Unavailable, WireReader

_REVISION_SQL = "SELECT revision FROM edukg.key_revision WHERE id = 1"
REVISION_SHARE = 0.25  # of the statement limit a remembered revision waits for a fresh one
LOCK_BACKOFF = 5.0  # seconds the remembered revision stands after a read was held up


class PostgresKeyStore(Connections, KeyStoreBase):
    """API keys in `edukg.api_keys`, always on the primary."""

    keys_table = "edukg.api_keys"
    mark = "%s"
    secret_table = "edukg.secret"  # noqa: S105 - a table name

    def __init__(
        self, url: str, recheck: float = 0.0, statement_seconds: float = STATEMENT_SECONDS
    ) -> None:
        super().__init__(recheck)
        self._url = url
        self._pool = LazyPool(url, setup=ensure_meta)  # the `edukg` schema, made once
        self._wire = WireReader.shared(url, WAIT, statement_seconds)
        self._released = False
        self._held_until = 0.0  # the key tables held by another session: until then

    def _revision(self) -> object:
        """The key store's revision counter; while PostgreSQL does not answer, or another
        session holds the key tables, the one last read (no revoke can commit there
        meanwhile, and a request that needs no data, a cached answer, should not wait).
        A read the key tables' lock holds up waits REVISION_SHARE of the statement limit
        at most, and then the revision is not asked for again for LOCK_BACKOFF seconds."""
        remembered = self._verdicts.revision
        if remembered is not None and (self._wire.quiet or time.monotonic() < self._held_until):
            return remembered
        wait = REVISION_SHARE * self._wire.statement_seconds if remembered is not None else 1e9
        deadline = time.monotonic() + wait
        current = REQUEST_DEADLINE.get()
        token = REQUEST_DEADLINE.set(deadline if current is None else min(current, deadline))
        try:
            return int(self._select(_REVISION_SQL, ())[0][0])
        except StatementTimeout:
            if remembered is not None:
                self._held_until = time.monotonic() + LOCK_BACKOFF
                return remembered
            raise self._timed_out() from None
        finally:
            REQUEST_DEADLINE.reset(token)

    def _lookup(self, key: str) -> Any:
        try:
            return super()._lookup(key)
        except StatementTimeout:
            raise self._timed_out() from None

    def _timed_out(self) -> KeyCheckTimeout:
        return KeyCheckTimeout(
            f"the key store did not answer within {self._wire.statement_seconds:g} s"
        )

    def _changed(self) -> None:
        """Move the revision: every node re-checks the keys it remembers (this one, which
        made the change, forgets them at once)."""
        self._execute("UPDATE edukg.key_revision SET revision = revision + 1 WHERE id = 1", ())
        self._verdicts.forget()

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        try:
            with self._pool.connection() as conn:
                cursor = conn.execute(sql, params)
                return cursor.fetchall() if cursor.description else cursor.rowcount
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from None

    def _one(self, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        rows = self._select(sql, params)
        return rows[0] if rows else None

    def _all(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._select(sql, params)

    def _select(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Reads (every request's key check) through the lean connection (pg_wire)."""
        self._pool.ready()  # the `edukg` schema, made once
        try:
            return self._wire.query(sql, list(params))
        except Unavailable as exc:
            raise StoreUnavailable(str(exc)) from None

    def _run(self, sql: str, params: tuple[Any, ...]) -> int:
        return int(self._execute(sql, params))
