"""A data request between its validation and its answer: what building it needs, and
the checks on what the handler built."""

from __future__ import annotations

import logging
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import orjson

from edukg.adapters.rest.base import Operation
from edukg.app import etags
from edukg.app.entrance import Later
from edukg.app.exchange import Exchange
from edukg.model.errors import ApiError
from edukg.store.base import DataInfo, Store

log = logging.getLogger("edukg")


@dataclass(frozen=True, slots=True)
class Parsed:
    """What the API's checks made of a request: its operation and validated values (by
    name, as the operation's parameter object, in canonical form, which the ETag names,
    and as the digest of that form, which the cache keys by)."""

    op: Operation[Any]
    values: dict[str, Any]
    params: Any
    canonical: bytes
    digest: bytes

    @staticmethod
    def of(op: Operation[Any], values: dict[str, Any], params: Any) -> Parsed:
        """The values' canonical form encoded once, for both the tag and the digest."""
        canonical = etags.canonical(values)
        return Parsed(op, values, params, canonical, etags.digest_of(canonical))


@dataclass(slots=True, eq=False)
class Pending(Later):
    """A validated data request whose response is still to be built."""

    parsed: Parsed  # the operation and its validated values
    ex: Exchange
    store: Store  # the release's
    info: DataInfo
    version: str  # what the tag names: content id, and the ranking or releases it varies with
    key: Hashable  # its response-cache key
    gz: bool
    secret: bytes  # signs cursors


def check_parsable(body: bytes, p: Pending) -> None:
    """Records were encoded once, at load: a damaged file must not reach a client."""
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError:
        log.error("damaged stored data for %s %s", p.parsed.op.operation_id, p.parsed.values)
        raise ApiError(
            "The stored data for this request is damaged; the operator should reload it."
        ) from None
