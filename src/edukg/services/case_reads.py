"""What the CASE provider reads of a release: records by CASE UUID, a framework's
members, the associations of a set of nodes, one association, a named definition.

The provider (adapters/case) turns these into CASE objects; it reads the store only
through here, as the REST handlers read it through services.graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from edukg.store.base import CASE_DEFINITIONS, Edge, Found, Members, Store, every_row

_PAGE = 1000  # members read per statement


def by_case_uuid(store: Store, case_uuid: str, kind: str) -> Found | None:
    """The record of `kind` with this CASE UUID, or None."""
    return store.by_case_uuid(case_uuid, (kind,))


def members(store: Store, framework: str) -> dict[str, dict[str, Any]]:
    """Every item of a framework (by node identifier), decoded, in identifier order."""
    rows = every_row(store, Members(framework), _PAGE)
    return {identifier: orjson.loads(doc) for identifier, doc in rows}


def edges_of(store: Store, nodes: Sequence[str]) -> list[Edge]:
    """Every relationship that has one of `nodes` at either end."""
    return store.edges_of(list(nodes))


def edges(store: Store, identifiers: Sequence[str]) -> list[Edge]:
    """Relationships by their own identifiers."""
    return store.edges(list(identifiers))


def records(store: Store, identifiers: Sequence[str]) -> dict[str, Found]:
    """Records by node identifier (those that exist)."""
    return store.by_identifiers(list(identifiers))


def definition(store: Store, sourced_id: str) -> dict[str, Any] | None:
    """A CASE definition (subject, license, item type) by its identifier, or None."""
    row = store.lookup(CASE_DEFINITIONS, sourced_id)
    named: dict[str, Any] | None = orjson.loads(row) if row else None
    return named
