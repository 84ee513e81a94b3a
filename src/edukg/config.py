"""Where edukg finds its data, and how it serves it: one settings object."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DB = "edukg.db"
DEFAULT_BASE_PATH = "/knowledge-graph/v0"


def resolve_db(db: str | None) -> str:
    """The database location: the `--db` value, else `$EDUKG_DB`, else ./edukg.db."""
    return db or os.environ.get("EDUKG_DB") or DEFAULT_DB


def keys_path_for(db: str) -> Path:
    """The API-key file that belongs to a SQLite data file (`x.db` -> `x.keys.db`).

    Keys live apart from the graph data so that a reload, which replaces the data
    file, can never lose or resurrect a key.
    """
    path = Path(db)
    if path.suffix:
        return path.with_name(f"{path.stem}.keys{path.suffix}")
    return path.with_name(f"{path.name}.keys")


def normalize_base_path(base_path: str) -> str:
    """`knowledge-graph/v0/` -> `/knowledge-graph/v0`; `/` -> ``."""
    stripped = base_path.strip().strip("/")
    return f"/{stripped}" if stripped else ""


@dataclass(frozen=True)
class Settings:
    """Everything a serving process needs to know."""

    db: str = DEFAULT_DB
    base_path: str = DEFAULT_BASE_PATH

    @classmethod
    def from_env(cls) -> Settings:
        """Settings for a worker process started by `edukg serve` (passed via env)."""
        return cls(
            db=resolve_db(None),
            base_path=normalize_base_path(os.environ.get("EDUKG_BASE_PATH", DEFAULT_BASE_PATH)),
        )
