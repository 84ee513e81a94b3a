"""After a load: the changes from the release it replaced as current, `--keep`, and what
the kept releases take. The load is done by then: a failure here is reported, not raised."""

from __future__ import annotations

import logging

from edukg.ingest.changes import ChangeOutcome, ensure
from edukg.store import Backend, Release, ReleaseError, database_errors

log = logging.getLogger("edukg.load")


def current_release(db: Backend) -> str | None:
    """The release `db` serves now, if any (before a load replaces it as current)."""
    try:
        releases = db.releases()
    except database_errors(OSError):
        return None
    try:
        return next((r.data_version for r in releases.list() if r.current), None)
    except database_errors(OSError):
        return None
    finally:
        releases.close()


def settle(
    db: Backend, previous: str | None, version: str, keep: int | None
) -> tuple[ChangeOutcome | str | None, list[str], list[Release]]:
    """(the changes from `previous`, or why they were not computed; the releases `keep`
    dropped; the kept releases with their sizes)."""
    releases = db.releases()
    changes = db.changes()
    outcome: ChangeOutcome | str | None = None
    dropped: list[str] = []
    found: list[Release] = []
    try:
        if previous is not None and previous != version:
            try:
                outcome = ensure(releases, changes, previous, version)
            except Exception as exc:  # the next request for them computes them instead
                log.warning("the changes from %s were not computed: %s", previous, exc)
                outcome = f"not computed ({exc}); the first request for them computes them"
        found = releases.list(sizes=True)
        if keep is not None:
            for release in [r for r in found if not r.current][: max(0, len(found) - keep)]:
                releases.drop(release.data_version)
                dropped.append(release.data_version)
            found = releases.list(sizes=True)
    except database_errors(ReleaseError, OSError) as exc:
        log.warning("the kept releases could not be listed or pruned: %s", exc)
    finally:
        changes.close()
        releases.close()
    return outcome, dropped, found
