"""The change feed's storage seam: the changes between two releases, computed once and kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

# One change between two releases: paging key, type, label, change, identifier, the
# record's JSON (without values) and its values as a JSON fragment (`,"before":...`).
ChangeRow = tuple[str, str, str, str, str, bytes, bytes]


@dataclass(frozen=True)
class ChangeFilter:
    """Which changes a page holds (None: any)."""

    type: str | None = None
    label: str | None = None
    change: str | None = None
    identifier: str | None = None


class ChangeStore(Protocol):
    """The changes between pairs of releases, computed once and kept.

    A pair is named by the content ids of its two releases (`pair_name`), so a release
    loaded again with other content never reuses a stale list. One process computes a
    pair at a time: it claims the pair, adds rows in batches (each a heartbeat), then
    finishes it; a claim whose heartbeat stopped is taken over.
    """

    def state(self, pair: str) -> str | None:
        """ "complete", "computing", or None (never computed, or abandoned)."""

    def claim(self, pair: str) -> bool:
        """Start computing `pair`; False if it is complete or another process computes it."""

    def add(self, pair: str, rows: list[ChangeRow]) -> None:
        """Keep a batch of a claimed pair's changes."""

    def finish(self, pair: str, counts: dict[str, dict[str, int]]) -> None:
        """Mark a claimed pair complete, with its counts by label and change."""

    def abandon(self, pair: str) -> None:
        """Throw a claimed pair's rows away (a failed computation)."""

    def page(
        self, pair: str, where: ChangeFilter, after: str, limit: int
    ) -> list[tuple[str, bytes, bytes]]:
        """Up to `limit` (key, record JSON, values fragment) rows after the key `after`."""

    def counts(self, pair: str) -> dict[str, dict[str, int]] | None:
        """A complete pair's counts by label and change."""

    def forget(self, kept: set[str]) -> None:
        """Remove the pairs naming a content id that is not in `kept`."""

    def close(self) -> None:
        """Close connections."""


def pair_name(older: str, newer: str) -> str:
    """The name of the changes from content `older` to content `newer`."""
    return f"{older}:{newer}"


def unkept(pairs: list[str], kept: set[str]) -> list[str]:
    """The pairs that name a content id not in `kept`."""
    return [pair for pair in pairs if not set(pair.split(":")) <= kept]


STALE_CLAIM = 60.0  # seconds without a heartbeat after which a claim is taken over
