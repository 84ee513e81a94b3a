"""The identifiers edukg gives CASE objects that have none of their own in the graph."""

from __future__ import annotations

import uuid

# The namespace of edukg's CASE identifiers: uuid5(NAMESPACE, ...).
NAMESPACE = uuid.UUID("6f1c2a4e-3b7d-5e8f-9a0b-1c2d3e4f5a6b")


def case_identifier(uri: str) -> str:
    """The identifier of an imported CASE object that no export node claims."""
    return str(uuid.uuid5(NAMESPACE, uri))


def definition_id(kind: str, name: str) -> str:
    """The identifier of a CASE definition (an item type, subject or license) by name."""
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{name}"))


def edge_id(identifier: str) -> str:
    """The CASE identifier of a graph relationship whose own is not a UUID."""
    return str(uuid.uuid5(NAMESPACE, f"edge:{identifier}"))
