"""What the stores raise that their callers answer for (store.base re-exports them)."""

from __future__ import annotations

from contextvars import ContextVar


class ReleaseError(Exception):
    """A release command that cannot be carried out (an unknown release, the current one
    dropped); nothing was changed."""


class StoreUnavailable(Exception):
    """The database cannot be reached; the API answers 503 and retries on the next request."""


class StatementTimeout(StoreUnavailable):
    """A read ran past its time limit and was interrupted (503, saying so)."""


class KeyCheckTimeout(StatementTimeout):
    """The key store did not answer a key's check within the limit (its table locked by
    another session, say): 503 saying the key could not be checked."""


# When the request being answered must be done (time.monotonic()), set by the server
# around a request's reads on PostgreSQL: every statement of the request waits only what
# is left of its one limit (`--statement-seconds`), its waits for a thread included.
REQUEST_DEADLINE: ContextVar[float | None] = ContextVar("edukg_request_deadline", default=None)
