"""The embedding model, loaded once per process, with its helper threads; dense ranking of
a query against candidate vectors, and its fusion with lexical ranks (search). Alignment
embeds its passages through services.alignment.passages."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from edukg.store.base import Candidates

# Reciprocal rank fusion's constant. 60 (Cormack, Clarke and Büttcher, 2009) is the usual
# default; on bench/search_eval.py a smaller k, which trusts each list's top hits more,
# found more expected records in the first five (10: 0.964; 30, 60, 100: 0.955).
RRF_K = 10
POOL = 50  # hits taken from each ranking before fusion
# Below this cosine a record is unrelated to the query (all-MiniLM-L6-v2 puts unrelated
# sentences near 0 and paraphrases above 0.5): it is not returned on meaning alone.
MIN_SIMILARITY = 0.3


def relevance_score(relevance: float) -> float:
    """A backend's lexical relevance (BM25 and the like, 0 to unbounded) mapped onto
    (0, 1), monotone, below the 1.0 an exact code scores."""
    return min(0.9999, relevance / (relevance + 1.0))


_lock = threading.Lock()
_encoder: Any = None
_missing = False


def available() -> bool:
    """Whether the embedding model can be loaded in this process."""
    return _load() is not None


def encoder() -> Any:
    """The embedding model (model.encoder.Encoder), or None where it cannot be loaded."""
    return _load()


def _load() -> Any:
    global _encoder, _missing  # noqa: PLW0603 - one model per process, loaded on first use
    if _encoder is None and not _missing:
        with _lock:
            if _encoder is None and not _missing:
                from edukg.model.encoder import Encoder, ModelMissing  # noqa: PLC0415

                try:
                    _encoder = Encoder(threads=1)  # a query is small: one thread
                except ModelMissing:
                    _missing = True
    return _encoder


def query_vector(text: str) -> Any:
    """The unit vector of `text` (float32), or None without the model."""
    encoder = _load()
    if encoder is None:
        return None
    return encoder.encode([text])[0]


def query_vector_soon(text: str) -> Future[Any]:
    """`query_vector(text)` on a helper thread, so a caller can rank by words meanwhile.

    The model, the tokenizer and SQLite all release the GIL in their heavy parts, so the
    embedding and the full-text query overlap on two cores.
    """
    future: Future[Any] = executor("query").submit(query_vector, text)
    return future


_pools: dict[str, ThreadPoolExecutor] = {}


def executor(purpose: str) -> ThreadPoolExecutor:
    """A small pool per purpose, made on first use: a search's one query never waits
    behind the halves of a long text being embedded for an alignment."""
    pool = _pools.get(purpose)
    if pool is None:
        with _lock:
            pool = _pools.get(purpose)
            if pool is None:
                pool = _pools[purpose] = ThreadPoolExecutor(
                    max_workers=2, thread_name_prefix=f"edukg-embed-{purpose}"
                )
    return pool


def nearest(candidates: Candidates, vector: Any, k: int) -> list[tuple[str, float]]:
    """The `k` candidates closest to `vector` by cosine, best first; ties by identifier."""
    import numpy as np  # noqa: PLC0415

    count = len(candidates.identifiers)
    if count == 0:
        return []
    sims = np.asarray(candidates.vectors, dtype=np.float32) @ vector
    top = np.argpartition(-sims, k - 1)[:k] if count > k else np.arange(count)
    kept = [int(i) for i in top if sims[i] >= MIN_SIMILARITY]
    ids = {i: candidates.identifiers[i] for i in kept}  # looked up for the hits only
    best = sorted(kept, key=lambda i: (-float(sims[i]), ids[i]))
    return [(ids[i], float(sims[i])) for i in best]


def fuse(lexical: list[str], dense: list[str], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of two rankings; scores scaled so that first in both is 1.

    Ties break by identifier, so equal inputs always give the same order.
    """
    scores: dict[str, float] = {}
    for ranking in (lexical, dense):
        for rank, identifier in enumerate(ranking, start=1):
            scores[identifier] = scores.get(identifier, 0.0) + 1.0 / (k + rank)
    top = 2.0 / (k + 1)
    return sorted(((i, s / top) for i, s in scores.items()), key=lambda pair: (-pair[1], pair[0]))
