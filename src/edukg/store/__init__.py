"""Storage: one narrow read protocol, with SQLite and PostgreSQL implementations.

Backends are imported when opened, so that the loader and the stores can share
code without import cycles, and PostgreSQL's driver loads only when used.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from edukg.store.backend import (
    LOCAL_RECHECK,
    Backend,
    BackendMissing,
    backend_of,
    require_postgres,
)
from edukg.store.base import (
    STATEMENT_SECONDS,
    DataInfo,
    Indexer,
    KeyInfo,
    KeyStore,
    Release,
    ReleaseError,
    Releases,
    Row,
    Store,
)
from edukg.store.changes_base import ChangeFilter, ChangeStore


def database_errors(*others: type[Exception]) -> tuple[type[Exception], ...]:
    """The errors a database driver raises when a write fails (a full disk, a lost
    connection), and `others`: callers catch these without naming a driver."""
    errors: list[type[Exception]] = [sqlite3.Error, *others]
    try:
        import psycopg  # noqa: PLC0415
    except ImportError:
        return tuple(errors)
    errors.append(psycopg.Error)
    return tuple(errors)


def is_postgres(db: str) -> bool:
    """Whether a `--db` value names a PostgreSQL database rather than a SQLite file."""
    return backend_of(db).networked


def open_store(
    db: str, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
) -> Store:
    """The data store for a `--db` (or `--read-db`) value (Backend.store)."""
    return backend_of(db).store(refresh, statement_seconds)


def open_releases(
    db: str, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
) -> Releases:
    """The releases kept in `db` (Backend.releases)."""
    return backend_of(db).releases(refresh, statement_seconds)


def open_changes(db: str) -> ChangeStore:
    """The changes kept between the releases of `db` (Backend.changes)."""
    return backend_of(db).changes()


def open_key_store(
    db: str,
    create: bool = True,
    recheck: float = 0.0,
    statement_seconds: float = STATEMENT_SECONDS,
) -> KeyStore:
    """The API-key store that belongs to a `--db` value (Backend.keys)."""
    return backend_of(db).keys(create, recheck, statement_seconds)


def on_local_files(*parts: object) -> list[Any]:
    """The parts that read local files (SQLite stores and key files): a server looks at
    those ahead of its requests (app/watch.py); a networked one's looks wait on the
    network, so they stay on the request's thread."""
    from edukg.store.sqlite import SqliteStore  # noqa: PLC0415
    from edukg.store.sqlite_keys import SqliteKeyStore  # noqa: PLC0415

    return [part for part in parts if isinstance(part, (SqliteStore, SqliteKeyStore))]


__all__ = [
    "LOCAL_RECHECK",
    "Backend",
    "BackendMissing",
    "ChangeFilter",
    "ChangeStore",
    "DataInfo",
    "Indexer",
    "KeyInfo",
    "KeyStore",
    "Release",
    "ReleaseError",
    "Releases",
    "Row",
    "Store",
    "backend_of",
    "database_errors",
    "is_postgres",
    "on_local_files",
    "open_changes",
    "open_key_store",
    "open_releases",
    "open_store",
    "require_postgres",
]
