"""`edukg index`: embed every searchable record's text once, resumably.

Rows go in order, a batch at a time: texts already in the cache (keyed by a hash of
model and text) are copied, the rest are embedded once per distinct text, and the
batch is made durable before the next. On more than one core the embedding runs in
worker processes with single-threaded BLAS: NumPy's element-wise steps use one core
each, so processes scale where threads do not.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from edukg.model.embedding import VECTOR_FORMAT
from edukg.store import open_indexer
from edukg.store.base import Indexer

log = logging.getLogger("edukg.index")

_BATCH = 8192  # rows per durable step
_PARALLEL_FROM = 2000  # fewer new texts than this: embed in-process (workers cost ~1 s)
_PIECE = 512  # texts per job sent to a worker

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
    runtime: str = ""  # "onnx" (int8) or "numpy"


def cache_key(fingerprint: str, text: str) -> bytes:
    """The cache key of `text` under a model, runtime and vector format: 16 bytes of SHA-256."""
    return hashlib.sha256(f"{fingerprint};{VECTOR_FORMAT}\0{text}".encode()).digest()[:16]


_worker_encoder: Any = None


def _worker_start() -> None:
    global _worker_encoder  # noqa: PLW0603 - one encoder per worker process
    from edukg.model.encoder import Encoder  # noqa: PLC0415

    _worker_encoder = Encoder()


def _worker_encode(texts: list[str]) -> bytes:
    import numpy as np  # noqa: PLC0415

    return bytes(_worker_encoder.encode(texts).astype(np.float32).tobytes())


class _Embedder:
    """Runs the model: ONNX Runtime int8 where installed, else NumPy (in-process or one
    worker per core)."""

    def __init__(self, workers: int, runtime: str = "auto") -> None:
        from edukg.model import onnx_encoder  # noqa: PLC0415
        from edukg.model.encoder import Encoder, ModelMissing  # noqa: PLC0415

        if runtime == "onnx" and not onnx_encoder.available():
            raise ModelMissing("ONNX Runtime is not installed: pip install 'edukg[index]'")
        self._local: Any = None
        if runtime == "onnx" or (runtime == "auto" and onnx_encoder.available()):
            try:
                self._local = onnx_encoder.OnnxEncoder(threads=workers)
                self.runtime = "onnx"
                workers = 1  # it runs its own threads
            except (OSError, RuntimeError, ValueError) as exc:
                if runtime == "onnx":
                    raise
                log.warning("ONNX Runtime unusable (%s); embedding with NumPy instead", exc)
        if self._local is None:
            self._local = Encoder()
            self.runtime = "numpy"
        self.fingerprint: str = self._local.fingerprint
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __call__(self, texts: list[str]) -> list[bytes]:
        import numpy as np  # noqa: PLC0415

        from edukg.model.embedding import ROW_BYTES  # noqa: PLC0415

        if self._workers <= 1 or len(texts) < _PARALLEL_FROM:
            blob = self._local.encode(texts).astype(np.float32).tobytes()
        else:
            # Similar lengths in each job, so each pads little.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            jobs = [order[i : i + _PIECE] for i in range(0, len(order), _PIECE)]
            pool = self._start()
            parts = pool.map(_worker_encode, [[texts[i] for i in job] for job in jobs])
            rows: list[bytes] = [b""] * len(texts)
            for job, part in zip(jobs, parts, strict=True):
                for n, i in enumerate(job):
                    rows[i] = part[n * ROW_BYTES : (n + 1) * ROW_BYTES]
            return rows
        return [blob[n * ROW_BYTES : (n + 1) * ROW_BYTES] for n in range(len(texts))]

    def _start(self) -> ProcessPoolExecutor:
        if self._pool is None:
            saved = {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
            os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
            try:
                self._pool = ProcessPoolExecutor(
                    self._workers, mp_context=get_context("spawn"), initializer=_worker_start
                )
                # Workers start (and read their environment) on first use: start them now.
                list(self._pool.map(_worker_encode, [["warm"]] * self._workers))
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


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
    runtime: str = "auto",
) -> IndexSummary:
    """Embed the rows `indexer` still lacks and mark its index complete."""
    started = time.monotonic()
    summary = IndexSummary(rows=indexer.total())
    summary.resumed_at = indexer.done()
    if summary.resumed_at >= summary.rows:
        indexer.finish()
        summary.already_complete = True
        summary.seconds = time.monotonic() - started
        return summary
    embed = _Embedder(workers if workers is not None else (os.cpu_count() or 1), runtime)
    summary.runtime = embed.runtime
    try:
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
    finally:
        embed.close()
    summary.seconds = time.monotonic() - started
    return summary


def index(
    db: str,
    progress: Progress | None = None,
    workers: int | None = None,
    runtime: str = "auto",
) -> IndexSummary:
    """Build (or finish) the semantic index of what `db` serves now.

    `runtime`: "onnx" (int8, fastest), "numpy" (float32), or "auto" (onnx if installed).
    """
    indexer = open_indexer(db)
    if indexer is None:
        raise LookupError(f"nothing is loaded in {db}")
    try:
        return build_index(indexer, progress, workers, runtime=runtime)
    finally:
        indexer.close()
