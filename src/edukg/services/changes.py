"""What changed between two kept releases, as the API pages it (`GET {base}/changes`).

The changes of a pair are computed once (at the load that made the newer release
current, or on the first request for another pair) and kept; until they are, a request
gets 503 with Retry-After and the computation is started in the background.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import orjson

from edukg.model.errors import ServiceUnavailableError
from edukg.services.graph import Page
from edukg.services.releases import pinned_store
from edukg.store.base import Releases
from edukg.store.changes_base import ChangeFilter, ChangeStore, pair_name

RETRY_AFTER = 5  # seconds a client waits for a pair being computed


class ChangesNotReady(ServiceUnavailableError):
    """The changes of a pair are being computed: 503, with Retry-After."""

    retry_after = RETRY_AFTER


class ChangeFeed:
    """Pages of kept changes; `start(older, newer)` begins computing a missing pair."""

    def __init__(
        self, releases: Releases, changes: ChangeStore, start: Callable[[str, str], None]
    ) -> None:
        self.releases = releases
        self.changes = changes
        self._start = start

    def pair_content(self, older: str, newer: str) -> str:
        """What a walk of the changes from `older` to `newer` reads: the two releases'
        content, as one hex name (cursors are bound to it, not to the current release)."""
        ids = [pinned_store(self.releases, v).info() for v in (older, newer)]
        named = "/".join(i.content_id if i is not None else "" for i in ids)
        return hashlib.sha256(named.encode()).hexdigest()

    def _pair(self, older: str, newer: str) -> str | None:
        """The kept pair's name; None for a release compared with itself (no changes)."""
        ids = [pinned_store(self.releases, v).info() for v in (older, newer)]
        if ids[0] is None or ids[1] is None or older == newer:
            return None
        pair = pair_name(ids[0].content_id, ids[1].content_id)
        state = self.changes.state(pair)
        if state != "complete":
            if state is None:
                self._start(older, newer)
            raise ChangesNotReady(
                f"The changes from {older} to {newer} are being computed; try again in a few"
                " seconds.",
                {"from": older, "to": newer},
            )
        return pair

    def page(
        self,
        older: str,
        newer: str,
        where: ChangeFilter,
        after: str | None,
        limit: int,
        values: bool,
    ) -> Page:
        """Up to limit+1 changes after the cursor's key, with values if asked."""
        pair = self._pair(older, newer)
        if pair is None:
            return Page([], limit)
        rows = self.changes.page(pair, where, after or "", limit + 1)
        return Page([(key, doc[:-1] + vals + b"}" if values else doc)
                     for key, doc, vals in rows], limit)  # fmt: skip

    def summary(self, older: str, newer: str) -> bytes:
        """Counts by label and change, as `{"from","to","counts":[...]}`."""
        pair = self._pair(older, newer)
        counts = (self.changes.counts(pair) if pair else None) or {}
        rows = [{"label": label, **per} for label, per in counts.items()]
        return orjson.dumps({"from": older, "to": newer, "counts": rows})

    def close(self) -> None:
        """Close the change store's connections."""
        self.changes.close()
