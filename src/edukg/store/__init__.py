"""Storage: one narrow read protocol, with SQLite and PostgreSQL implementations.

Backends are imported when opened, so that the loader and the stores can share
code without import cycles, and PostgreSQL's driver loads only when used.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from edukg.store.base import (
    STATEMENT_SECONDS,
    DataInfo,
    Indexer,
    KeyInfo,
    KeyStore,
    Loader,
    Release,
    ReleaseError,
    Releases,
    Row,
    Store,
)
from edukg.store.changes_base import ChangeFilter, ChangeStore

# Seconds a server's look at its SQLite files (the data file's identity, the key file's
# data_version) holds: a look is a system call and a statement, too dear for every cache
# hit; a new load or a revoke is served within this (docs/security.md).
LOCAL_RECHECK = 0.002


class BackendMissing(RuntimeError):
    """A `--db` or `--redis` URL names a backend whose optional packages are not installed."""


def require_postgres() -> None:
    """Raise BackendMissing, with the command that fixes it, when psycopg is absent."""
    try:
        import psycopg  # noqa: F401, PLC0415
        import psycopg_pool  # noqa: F401, PLC0415
    except ImportError:
        raise BackendMissing(
            "PostgreSQL support is not installed: pip install 'edukg[postgres]'"
        ) from None


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
    return db.startswith(("postgresql://", "postgres://"))


def missing_database(db: str) -> str | None:
    """Why `db` names no database, in one line (a SQLite file that is not there, or a
    PostgreSQL database the server says does not exist); None when it exists or cannot be
    told now (an unreachable server: the caller's own errors say so)."""
    if not is_postgres(db):
        if Path(db).is_file():
            return None
        return f"there is no database at {db}"
    require_postgres()
    import psycopg  # noqa: PLC0415

    try:
        psycopg.connect(db, connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        if "does not exist" in str(exc):
            name = db.rsplit("/", 1)[-1].split("?", 1)[0]
            return (
                f"the PostgreSQL database {name!r} does not exist: create it first"
                f" (createdb {name}, or CREATE DATABASE {name})"
            )
    return None


def open_store(
    db: str, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
) -> Store:
    """The data store for a `--db` (or `--read-db`) value.

    `refresh`: how often, in seconds, a PostgreSQL reader looks for a new version; a
    SQLite reader looks at its file at most that often, and at least every
    LOCAL_RECHECK seconds. `statement_seconds`: how long one read may run, on either
    backend, before it is interrupted (serve --statement-seconds).
    """
    if is_postgres(db):
        require_postgres()
        from edukg.store.postgres import PostgresStore  # noqa: PLC0415

        return PostgresStore(db, refresh, statement_seconds=statement_seconds)
    from edukg.store.sqlite import SqliteStore  # noqa: PLC0415

    return SqliteStore(db, recheck=min(refresh, LOCAL_RECHECK), statement_seconds=statement_seconds)


def open_releases(
    db: str, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
) -> Releases:
    """The releases kept in `db`, each readable by a store of its own; opening it migrates a
    database made before releases existed."""
    if is_postgres(db):
        require_postgres()
        from edukg.store.postgres_releases import PostgresReleases  # noqa: PLC0415

        return PostgresReleases(db, refresh, statement_seconds)
    from edukg.store.sqlite_releases import SqliteReleases  # noqa: PLC0415

    return SqliteReleases(db, statement_seconds)


def open_changes(db: str) -> ChangeStore:
    """The changes kept between the releases of `db` (SQLite: the file `<db>.changes`)."""
    if is_postgres(db):
        require_postgres()
        from edukg.store.postgres_changes import PostgresChanges  # noqa: PLC0415

        return PostgresChanges(db)
    from edukg.store.sqlite_changes import SqliteChanges  # noqa: PLC0415

    return SqliteChanges(db)


def open_key_store(
    db: str,
    create: bool = True,
    recheck: float = 0.0,
    statement_seconds: float = STATEMENT_SECONDS,
) -> KeyStore:
    """The API-key store that belongs to a `--db` value (always the primary).

    A SQLite key file is made on first use only if `create`: servers and the commands
    that only read keys pass False, so a mistyped `--db` makes no file. `recheck`:
    seconds a look for revokes (the key file, the PostgreSQL revision) holds (servers:
    LOCAL_RECHECK; 0, every verify looks).
    """
    if is_postgres(db):
        require_postgres()
        from edukg.store.postgres_keys import PostgresKeyStore  # noqa: PLC0415

        return PostgresKeyStore(db, recheck, statement_seconds=statement_seconds)
    from edukg.store.sqlite_keys import SqliteKeyStore  # noqa: PLC0415

    return SqliteKeyStore.for_db(db, create, recheck)


def on_local_files(*parts: object) -> list[Any]:
    """The parts that read local files (SQLite stores and key files): a server looks at
    those ahead of its requests (app/watch.py); a networked one's looks wait on the
    network, so they stay on the request's thread."""
    from edukg.store.sqlite import SqliteStore  # noqa: PLC0415
    from edukg.store.sqlite_keys import SqliteKeyStore  # noqa: PLC0415

    return [part for part in parts if isinstance(part, (SqliteStore, SqliteKeyStore))]


def open_loader(db: str) -> Loader:
    """A loader that builds a new version of `db` beside the served one."""
    if is_postgres(db):
        require_postgres()
        from edukg.store.postgres_load import PostgresLoader  # noqa: PLC0415

        return PostgresLoader(db)
    from edukg.store.sqlite_load import SqliteLoader  # noqa: PLC0415

    return SqliteLoader(db)


def open_indexer(db: str) -> Indexer | None:
    """The semantic-index writer for the version `db` serves; None when nothing is loaded."""
    if is_postgres(db):
        require_postgres()
        from edukg.store.postgres_load import PostgresIndexer  # noqa: PLC0415

        return PostgresIndexer.open(db)
    from edukg.store.sqlite_vectors import SqliteIndexer  # noqa: PLC0415

    return SqliteIndexer.open(db)


__all__ = [
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
    "is_postgres",
    "open_changes",
    "open_indexer",
    "open_key_store",
    "open_releases",
    "open_store",
]
