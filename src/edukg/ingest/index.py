"""`edukg index`: embed every searchable record's text once, resumably.

Rows go in order, a batch at a time: texts already in the cache (keyed by a hash of
model and text) are copied, the rest are embedded once per distinct text (ONNX Runtime,
int8, its threads on every core), and the batch is made durable before the next.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from edukg.model.embedding import VECTOR_FORMAT
from edukg.store import Backend, backend_of
from edukg.store.base import Indexer

log = logging.getLogger("edukg.index")

_BATCH = 1024  # rows per durable step: what /healthz sees of a running index advances by it

Progress = Callable[[int, int], None]  # (rows done, rows in all)


@dataclass
class IndexSummary:
    """What `edukg index` did."""

    rows: int = 0
    resumed_at: int = 0
    embedded: int = 0  # distinct texts run through the model
    from_cache: int = 0
    seconds: float = 0.0
    already_complete: bool = False
    runtime: str = ""  # what embedded the texts


def cache_key(fingerprint: str, text: str) -> bytes:
    """The cache key of `text` under a model, runtime and vector format: 16 bytes of SHA-256."""
    return hashlib.sha256(f"{fingerprint};{VECTOR_FORMAT}\0{text}".encode()).digest()[:16]


class _Embedder:
    """The model, as bytes per text (float32 rows of ROW_BYTES)."""

    runtime = "onnx int8"

    def __init__(self, workers: int) -> None:
        from edukg.model.encoder import Encoder  # noqa: PLC0415 - loads ONNX Runtime

        self._encoder = Encoder(threads=workers)
        self.fingerprint: str = self._encoder.fingerprint

    def __call__(self, texts: list[str]) -> list[bytes]:
        import numpy as np  # noqa: PLC0415

        from edukg.model.embedding import ROW_BYTES  # noqa: PLC0415

        if not texts:
            return []
        blob = self._encoder.encode(texts).astype(np.float32).tobytes()
        return [blob[n * ROW_BYTES : (n + 1) * ROW_BYTES] for n in range(len(texts))]


def _batches(rows: Iterator[tuple[int, str]], size: int) -> Iterator[list[tuple[int, str]]]:
    batch: list[tuple[int, str]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def build_index(
    indexer: Indexer,
    progress: Progress | None = None,
    workers: int | None = None,
    batch: int = _BATCH,
    underway: Callable[[], None] | None = None,
) -> IndexSummary:
    """Embed the rows `indexer` still lacks and mark its index complete.

    When another process is building the same index (the load's own, in the background),
    `underway` is called, and this one waits for that one (`progress` follows its rows),
    then finishes what it left, if anything: two writers of one index would each find
    the other's rows where it meant to write its own."""
    started = time.monotonic()
    summary = IndexSummary(rows=indexer.total())
    _hold(indexer, summary.rows, progress, underway)
    summary.resumed_at = indexer.done()
    if summary.resumed_at >= summary.rows:
        indexer.finish()
        summary.already_complete = True
        summary.seconds = time.monotonic() - started
        return summary
    embed = _Embedder(workers if workers is not None else (os.cpu_count() or 1))
    summary.runtime = embed.runtime
    done = summary.resumed_at
    if progress:
        progress(done, summary.rows)
    for rows in _batches(indexer.texts(done), batch):
        keys = [cache_key(embed.fingerprint, text) for _, text in rows]
        known = indexer.cached(list(dict.fromkeys(keys)))
        missing = {k: text for k, (_, text) in zip(keys, rows, strict=True) if k not in known}
        fresh = list(zip(missing, embed(list(missing.values())), strict=True))
        known.update(fresh)
        summary.embedded += len(fresh)
        summary.from_cache += len(rows) - sum(1 for k in keys if k in missing)
        indexer.write(rows[0][0], b"".join(known[k] for k in keys), fresh)
        done = rows[-1][0] + 1
        if progress:
            progress(done, summary.rows)
    indexer.finish()
    summary.seconds = time.monotonic() - started
    return summary


def _hold(
    indexer: Indexer, rows: int, progress: Progress | None, underway: Callable[[], None] | None
) -> None:
    """Return once this process is the index's one writer."""
    if indexer.hold():
        return
    if underway is not None:
        underway()
    while not indexer.hold():
        if progress:
            progress(indexer.done(), rows)
        time.sleep(_WAIT_SECONDS)


_WAIT_SECONDS = 0.5  # between looks at an index another process is building


def index(
    db: str | Backend,
    progress: Progress | None = None,
    workers: int | None = None,
    underway: Callable[[], None] | None = None,
) -> IndexSummary:
    """Build (or finish) the semantic index of what `db` serves now (after the process
    that is building it, if one is: `build_index`)."""
    backend = backend_of(db)
    indexer = backend.indexer()
    if indexer is None:
        raise LookupError(f"nothing is loaded in {backend.shown}")
    try:
        return build_index(indexer, progress, workers, underway=underway)
    finally:
        indexer.close()
