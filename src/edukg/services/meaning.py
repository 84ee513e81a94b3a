"""The semantic index of one filter, ready to rank many texts against: its vectors and
where each identifier sits, kept per release (an alignment reads it whole)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edukg.services.memo import remembered
from edukg.store.base import Candidates, Search, Store

_BLOCK = 64  # texts whose similarities are held at once (64 x candidates floats)


@dataclass(frozen=True)
class Indexed:
    """The records a filter admits, their unit vectors, and each one's row."""

    identifiers: list[str]
    vectors: Any  # float32, one row per identifier
    rows: dict[str, int]

    def similarities(self, texts: Any, identifiers: list[str]) -> Any:
        """Cosines of each of `texts` (rows) with each of `identifiers` (columns)."""
        import numpy as np  # noqa: PLC0415

        columns = [self.rows[i] for i in identifiers]
        if not columns:
            return np.zeros((len(texts), 0), dtype=np.float32)
        return texts @ self.vectors[columns].T

    def top(self, texts: Any, k: int, floor: float) -> list[list[tuple[str, float]]]:
        """For each text, up to `k` records at least `floor` alike, best first."""
        import numpy as np  # noqa: PLC0415

        out: list[list[tuple[str, float]]] = []
        count = len(self.identifiers)
        for start in range(0, len(texts), _BLOCK):
            sims = texts[start : start + _BLOCK] @ self.vectors.T
            for row in sims:
                best = np.argpartition(-row, k - 1)[:k] if count > k else np.arange(count)
                kept = sorted((int(i) for i in best if row[i] >= floor), key=lambda i: -row[i])
                out.append([(self.identifiers[i], float(row[i])) for i in kept])
        return out


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
