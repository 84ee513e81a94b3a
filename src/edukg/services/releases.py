"""The loaded data releases, as the API lists them (`GET {base}/data-versions`)."""

from __future__ import annotations

import orjson

from edukg.model.errors import NotFoundError
from edukg.services.graph import Page
from edukg.store.base import Releases, Store


def data_versions(releases: Releases, after: str | None, limit: int) -> Page:
    """The kept releases, oldest load first, from after the cursor's key."""
    rows = []
    for n, release in enumerate(releases.list()):
        key = f"{n:06d}"  # its place in the list, oldest load first
        if after is not None and key <= after:
            continue
        record = {
            "dataVersion": release.data_version,
            "contentId": release.content_id,
            "loadedAt": release.loaded_at,
            "counts": release.counts,
            "current": release.current,
        }
        rows.append((key, orjson.dumps(record)))
    return Page(rows[: limit + 1], limit)


def pinned_store(releases: Releases, version: str) -> Store:
    """The store that answers for release `version`; 404 naming the kept ones if none."""
    store = releases.store(version)
    if store is not None and store.info() is not None:
        return store
    kept = ", ".join(r.data_version for r in releases.list()) or "none"
    raise NotFoundError(
        f"No data release {version[:64]!r} is loaded here. Loaded releases: {kept}"
        " (GET data-versions lists them).",
        {"dataVersion": version[:64], "loaded": kept.split(", ") if kept != "none" else []},
    )
