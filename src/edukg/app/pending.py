"""A data request between its validation and its answer: what building it needs, and
the checks on what the handler built."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson

from edukg.adapters.rest.base import Operation
from edukg.app.routing import Found
from edukg.model.errors import ApiError
from edukg.store.base import DataInfo, Store

log = logging.getLogger("edukg")
Scope = dict[str, Any]


@dataclass(slots=True)
class Pending:
    """A validated data request whose response is still to be built."""

    op: Operation[Any]
    values: dict[str, Any]
    params: Any  # the operation's parameter object
    scope: Scope
    store: Store  # the release's
    info: DataInfo
    version: str  # what the tag names: content id, and the search ranking for searches
    tag: bytes
    gz: bool
    secret: bytes  # signs cursors


def check_parsable(body: bytes, p: Pending) -> None:
    """Records were encoded once, at load: a damaged file must not reach a client."""
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError:
        log.error("damaged stored data for %s %s", p.op.operation_id, p.values)
        raise ApiError(
            "The stored data for this request is damaged; the operator should reload it."
        ) from None


BODY_KEY = "edukg.body"  # the scope's key for a POST operation's body, read before the rest


def takes_body(found: Found | None, scope: Scope) -> bool:
    """Whether this request is a POST to the operation that takes a body."""
    op = found.operation if found is not None else None
    return op is not None and op.takes_body and scope["method"] == "POST"
