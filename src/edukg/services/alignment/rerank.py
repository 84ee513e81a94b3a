"""The fifth stage: the learned ranking stage, reranking the best candidates.

Takes the `Scored` result of fusion; gives it with `total` reranked. Today it is the
identity (the fused order stands); a learned reranker slots in here, loaded through
services.alignment.artifacts, and its fingerprint joins the ranking's version
(`fingerprint`).
"""

from __future__ import annotations

from edukg.services.alignment.scored import Scored


def reranked(scored: Scored) -> Scored:
    """`scored` with its order reranked (today: as fused)."""
    return scored


def fingerprint() -> str | None:
    """What identifies the learned stage in use (None: none is)."""
    return None
