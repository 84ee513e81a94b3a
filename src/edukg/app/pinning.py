"""Which data release answers a request: the current one, or the one it pins.

A request pins release X with the header `X-Data-Version: X` or the path prefix
`/releases/X` (for clients that can set only a base URL, and for links); the prefix is
taken off before routing, so every path edukg serves can be pinned. The chosen store
rides in the request's scope, where every handler looks for it.
"""

from __future__ import annotations

from typing import Any

from edukg.model.errors import ValidationError
from edukg.services.releases import pinned_store
from edukg.store.base import Releases, Store

PREFIX = "/releases/"
STORE_KEY = "edukg.store"  # the scope entry that holds the chosen store
_HEADER = b"x-data-version"
Scope = dict[str, Any]


def asks_for_release(scope: Scope) -> bool:
    """Whether a request names a release at all (the common case, none, costs a scan of
    its header names)."""
    return scope["path"].startswith(PREFIX) or any(
        name == _HEADER for name, _ in scope.get("headers", ())
    )


def pin(scope: Scope, releases: Releases) -> Scope:
    """The scope to answer with: the prefix taken off the path, the release's store set.

    400 when the header and the prefix name different releases (or the header is given
    twice, differently); 404, naming the loaded releases, when the one named is not kept.
    """
    named = [value.decode("latin-1").strip() for name, value in scope.get("headers", ())
             if name == _HEADER]  # fmt: skip
    path: str = scope["path"]
    if path.startswith(PREFIX):
        version, _, rest = path[len(PREFIX) :].partition("/")
        named.append(version)
        scope = {**scope, "path": "/" + rest, "raw_path": _raw_rest(scope, version, rest)}
    if len(set(named)) > 1:
        shown = " and ".join(repr(n[:64]) for n in dict.fromkeys(named))
        raise ValidationError(
            f"The request names two data releases ({shown}), by the X-Data-Version header"
            " and the /releases/ path prefix. Name one, or the same one in both.",
            {"reason": "conflicting_data_versions"},
        )
    store: Store = pinned_store(releases, named[0])
    return {**scope, STORE_KEY: store}


def unpinned(scope: Scope) -> Scope:
    """The scope with any /releases/X prefix taken off, and no release looked up."""
    path: str = scope["path"]
    if not path.startswith(PREFIX):
        return scope
    version, _, rest = path[len(PREFIX) :].partition("/")
    return {**scope, "path": "/" + rest, "raw_path": _raw_rest(scope, version, rest)}


def _raw_rest(scope: Scope, version: str, rest: str) -> bytes:
    """The raw path without the prefix (as sent, when the prefix was sent plainly)."""
    raw: bytes = scope.get("raw_path") or b""
    sent = (PREFIX + version).encode("latin-1", "replace")
    return raw[len(sent) :] if raw.startswith(sent) else ("/" + rest).encode()


def store_of(scope: Scope, current: Store) -> Store:
    """The store that answers this request."""
    store: Store = scope.get(STORE_KEY, current)
    return store
