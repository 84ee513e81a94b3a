"""The semantic index of one filter, ready to rank many texts against: its vectors and
where each identifier sits, kept per release (an alignment reads it whole)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edukg.services.memo import remembered
from edukg.store.base import Candidates, Search, Store


@dataclass(frozen=True)
class Indexed:
    """The records a filter admits, their unit vectors, and each one's row."""

    identifiers: list[str]
    vectors: Any  # float32, one row per identifier
    rows: dict[str, int]


def indexed(store: Store, search: Search) -> Indexed | None:
    """The index of `search`'s filters (its words ignored); None without a semantic index.

    Only the identifiers are kept between requests (reading them costs a query each); the
    vectors are the store's, as it has them now, so nothing here keeps a release's file
    mapped once the release is dropped."""
    found = store.candidates(search)
    if found is None:
        return None
    # Rows are numbered by each backend: the same content on SQLite and on PostgreSQL (one
    # process may read both) must not share one numbering.
    kind = type(store).__qualname__
    identifiers, rows = remembered(store, ("meaning", kind, search), lambda: _listed(found))
    return Indexed(identifiers, found.vectors, rows)


def _listed(found: Candidates) -> tuple[int, tuple[list[str], dict[str, int]]]:
    identifiers = list(found.identifiers)
    rows = {identifier: row for row, identifier in enumerate(identifiers)}
    return 200 * len(identifiers), (identifiers, rows)  # about the bytes of both
