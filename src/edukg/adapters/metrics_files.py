"""Where the worker processes serving a database keep their metrics files
(app/metrics.py writes and reads them; `edukg serve` clears them as it starts)."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from edukg.store import is_postgres


def metrics_dir_for(db: str) -> Path:
    """Where the workers serving `db` write their figures: beside a SQLite file, in the
    temporary directory for a PostgreSQL database (named by its URL's digest)."""
    if is_postgres(db):
        digest = hashlib.sha256(db.encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"edukg-metrics-{digest}"
    return Path(f"{db}.metrics")


def clear(directory: Path) -> None:
    """Forget an earlier run's figures (`serve` starts counting from zero)."""
    if directory.is_dir():
        for old in directory.glob("worker-*.json"):
            old.unlink(missing_ok=True)
