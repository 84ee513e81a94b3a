"""Storage: one narrow read protocol, with a SQLite implementation."""

from __future__ import annotations

from edukg.store.base import DataInfo, KeyInfo, KeyStore, Row, Store
from edukg.store.sqlite import SqliteKeyStore, SqliteStore


def open_store(db: str) -> Store:
    """The data store for a `--db` value."""
    return SqliteStore(db)


def open_key_store(db: str) -> KeyStore:
    """The API-key store that belongs to a `--db` value."""
    return SqliteKeyStore.for_db(db)


__all__ = [
    "DataInfo",
    "KeyInfo",
    "KeyStore",
    "Row",
    "SqliteKeyStore",
    "SqliteStore",
    "Store",
    "open_key_store",
    "open_store",
]
