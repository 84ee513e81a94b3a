"""Where a framework item stands: its ancestors, and the domain a teacher knows it by.

A standard's domain is the framework's own Domain level where it has one (Common Core's
"Number & Operations—Fractions" of grade 3, which teachers call 3.NF); where a framework
has no such level, the level just above its clusters; failing both, the grouping just
below the framework. A domain is named by the code its standards share (3.NF), so the
framework's records need not carry one. Alignment, coverage and the explorer all ask here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import orjson

from edukg.store.base import PARENTS, Store

_DEPTH = 64  # deeper than any framework; stops a cycle in bad data
_DOMAIN, _CLUSTER = "Domain", "Cluster"


@dataclass(frozen=True)
class Node:
    """What the hierarchy reads of one item."""

    identifier: str
    code: str | None
    description: str | None
    statement_type: str | None
    case_uuid: str | None


@dataclass(frozen=True)
class Ancestry:
    """Items' parents (the first, where an item has several) and the records of all of
    them, up to each item's top."""

    parent: dict[str, str]
    nodes: dict[str, Node]

    def chain(self, identifier: str) -> list[str]:
        """`identifier`'s ancestors, its parent first."""
        out: list[str] = []
        seen = {identifier}
        node = self.parent.get(identifier)
        while node is not None and node not in seen and len(out) < _DEPTH:
            out.append(node)
            seen.add(node)
            node = self.parent.get(node)
        return out

    def domain(self, identifier: str) -> str | None:
        """The identifier of `identifier`'s domain (see the module's doc), or None."""
        chain = self.chain(identifier)
        types = [self.nodes[a].statement_type if a in self.nodes else None for a in chain]
        if _DOMAIN in types:
            return chain[types.index(_DOMAIN)]
        if _CLUSTER in types:
            above = types.index(_CLUSTER) + 1
            return chain[above] if above < len(chain) and chain[above] in self.nodes else None
        # The grouping just below the top (the framework itself has no statement type).
        groupings = [a for a in chain if a in self.nodes]
        return groupings[-1] if groupings else None

    def path(self, identifier: str) -> list[Node]:
        """The groupings above `identifier`, from the top down (the framework left out)."""
        return [self.nodes[a] for a in reversed(self.chain(identifier)) if a in self.nodes]


def ancestry(store: Store, identifiers: Iterable[str]) -> Ancestry:
    """The ancestry of `identifiers`, read one level at a time."""
    parent: dict[str, str] = {}
    frontier = sorted(set(identifiers))
    for _ in range(_DEPTH):
        if not frontier:
            break
        found: dict[str, str] = {}
        for child, up in store.links_many(PARENTS, frontier):
            found.setdefault(child, up)
        parent.update(found)
        frontier = sorted({p for p in found.values() if p not in parent})
    nodes: dict[str, Node] = {}
    ups = sorted(set(parent.values()))
    for start in range(0, len(ups), 1000):
        for identifier, record in store.by_identifiers(ups[start : start + 1000]).items():
            if record.kind != "standard":
                continue  # the framework itself: not a grouping
            doc = orjson.loads(record.doc)
            nodes[identifier] = Node(
                identifier,
                doc.get("statementCode"),
                doc.get("description"),
                doc.get("statementType"),
                doc.get("caseIdentifierUUID"),
            )
    return Ancestry(parent, nodes)


def shared_code(codes: Sequence[str | None]) -> str | None:
    """The dotted code prefix every one of `codes` starts with (3.NF for 3.NF.A.1 and
    3.NF.B.3), or None when they share none."""
    split = [c.split(".") for c in codes if c]
    if not split:
        return None
    common: list[str] = []
    for parts in zip(*split, strict=False):
        if any(p != parts[0] for p in parts):
            break
        common.append(parts[0])
    if len(common) == min(len(s) for s in split):
        common = common[:-1]  # a lone standard's domain is not the standard itself
    return ".".join(common) or None


def domain_codes(ancestry: Ancestry, standards: dict[str, str | None]) -> dict[str, str | None]:
    """Each domain's code, from the standards under it (`standards`: identifier -> code):
    the code its clusters share with their letter left out (3.NF.A and 3.NF.B: 3.NF),
    else the code its standards share."""
    clusters: dict[str, set[str]] = {}
    codes: dict[str, list[str | None]] = {}
    for identifier, code in standards.items():
        domain = ancestry.domain(identifier)
        if domain is None:
            continue
        codes.setdefault(domain, []).append(code)
        for above in ancestry.chain(identifier):
            node = ancestry.nodes.get(above)
            if node is not None and node.statement_type == _CLUSTER and node.code:
                clusters.setdefault(domain, set()).add(node.code.rsplit(".", 1)[0])
                break
    out: dict[str, str | None] = {}
    for domain, found in codes.items():
        heads = sorted(clusters.get(domain, ()))
        out[domain] = (
            (heads[0] if len(heads) == 1 else shared_code(heads)) if heads else (shared_code(found))
        )
    return out
