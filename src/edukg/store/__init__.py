"""Storage: one narrow read protocol, with SQLite and PostgreSQL implementations.

Backends are imported when opened, so that the loader and the stores can share
code without import cycles, and PostgreSQL's driver loads only when used.
"""

from __future__ import annotations

from edukg.store.base import DataInfo, KeyInfo, KeyStore, Row, Store


def is_postgres(db: str) -> bool:
    """Whether a `--db` value names a PostgreSQL database rather than a SQLite file."""
    return db.startswith(("postgresql://", "postgres://"))


def open_store(db: str) -> Store:
    """The data store for a `--db` value."""
    from edukg.store.sqlite import SqliteStore  # noqa: PLC0415

    return SqliteStore(db)


def open_key_store(db: str) -> KeyStore:
    """The API-key store that belongs to a `--db` value."""
    from edukg.store.sqlite import SqliteKeyStore  # noqa: PLC0415

    return SqliteKeyStore.for_db(db)


__all__ = [
    "DataInfo",
    "KeyInfo",
    "KeyStore",
    "Row",
    "Store",
    "is_postgres",
    "open_key_store",
    "open_store",
]
