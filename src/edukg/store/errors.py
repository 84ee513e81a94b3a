"""What the stores raise that their callers answer for (store.base re-exports them)."""

from __future__ import annotations


class ReleaseError(Exception):
    """A release command that cannot be carried out (an unknown release, the current one
    dropped); nothing was changed."""


class StoreUnavailable(Exception):
    """The database cannot be reached; the API answers 503 and retries on the next request."""


class StatementTimeout(StoreUnavailable):
    """A read ran past its time limit and was interrupted (503, saying so)."""
