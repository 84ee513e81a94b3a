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
_HEADER = b"x-data-version"
Scope = dict[str, Any]


def unpinned(scope: Scope) -> tuple[Scope, str | None]:
    """The scope with any /releases/X prefix taken off, and the X it named (or None)."""
    path: str = scope["path"]
    if not path.startswith(PREFIX):
        return scope, None
    version, _, rest = path[len(PREFIX) :].partition("/")
    raw = _raw_rest(scope, version, rest)
    return {**scope, "path": "/" + rest, "raw_path": raw}, version


def pin(scope: Scope, by_path: str | None, releases: Releases) -> Store:
    """The store of the release a request names by its X-Data-Version header or (as
    `by_path`) its path prefix.

    400 when the header and the prefix name different releases (or the header is given
    twice, differently); 404, naming the loaded releases, when the one named is not kept.
    """
    named = [value.decode("latin-1").strip() for name, value in scope["headers"]
             if name == _HEADER]  # fmt: skip
    if by_path is not None:
        named.append(by_path)
    if len(set(named)) > 1:
        shown = " and ".join(repr(n[:64]) for n in dict.fromkeys(named))
        raise ValidationError(
            f"The request names two data releases ({shown}), by the X-Data-Version header"
            " and the /releases/ path prefix. Name one, or the same one in both.",
            {"reason": "conflicting_data_versions"},
        )
    store: Store = pinned_store(releases, named[0])
    return store


def _raw_rest(scope: Scope, version: str, rest: str) -> bytes:
    """The raw path without the prefix (as sent, when the prefix was sent plainly)."""
    raw: bytes = scope.get("raw_path") or b""
    sent = (PREFIX + version).encode("latin-1", "replace")
    return raw[len(sent) :] if raw.startswith(sent) else ("/" + rest).encode()
