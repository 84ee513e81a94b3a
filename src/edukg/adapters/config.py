"""Where edukg finds its data, and how it serves it: one settings object."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_DB = "edukg.db"
DEFAULT_BASE_PATH = "/knowledge-graph/v0"


def resolve_db(db: str | None) -> str:
    """The database location: the `--db` value, else `$EDUKG_DB`, else ./edukg.db."""
    return db or os.environ.get("EDUKG_DB") or DEFAULT_DB


def normalize_base_path(base_path: str) -> str:
    """`knowledge-graph/v0/` -> `/knowledge-graph/v0`; `/` -> ``."""
    stripped = base_path.strip().strip("/")
    return f"/{stripped}" if stripped else ""


# No per-key limit unless one is set (`serve --rate` or `keys create --rate`): a
# self-hosted server should not throttle its own operator. Public deployments set one
# (README, "Scale out"); the burst applies only where a rate does.
DEFAULT_RATE = 0.0  # requests per second per key, sustained; 0: no limit
DEFAULT_BURST = 40  # requests per key at once
# Keyless CASE clients (serve --case-public), per address: an importer's pace, not a flood.
DEFAULT_CASE_PUBLIC_RATE = 2.0
DEFAULT_CASE_PUBLIC_BURST = 20


@dataclass(frozen=True)
class Settings:
    """Everything a serving process needs to know.

    Each field has a flag of `edukg serve` and an environment variable (which is how
    `serve` hands them to its worker processes): EDUKG_DB, EDUKG_BASE_PATH,
    EDUKG_READ_DB, EDUKG_REDIS, EDUKG_RATE, EDUKG_BURST, EDUKG_REFRESH, EDUKG_ACCESS_LOG, EDUKG_CACHE_MAX_AGE,
    EDUKG_RESPONSE_CACHE_MB, EDUKG_PUBLIC_URL, EDUKG_CASE_PUBLIC, EDUKG_CASE_PUBLIC_RATE,
    EDUKG_CASE_PUBLIC_BURST, EDUKG_CASE_CACHE_MB, EDUKG_ALLOWED_ORIGINS.
    """

    db: str = DEFAULT_DB
    base_path: str = DEFAULT_BASE_PATH
    read_db: str | None = None  # a replica for data reads; keys are always read from `db`
    redis: str | None = None  # shared rate limits; without it, limits are per process
    rate: float = DEFAULT_RATE  # default per-key limit; 0 turns limits off
    burst: int = DEFAULT_BURST
    refresh: float = 1.0  # seconds between PostgreSQL readers' looks for a new version
    access_log: bool = True  # one JSON line per request on the `edukg.access` logger (as `serve`)
    cache_max_age: int = 60  # seconds clients may reuse a data response without asking
    response_cache_mb: int = 64  # finished responses kept per process, by ETag; 0: none
    work_threads: int = 2  # threads for expensive requests (searches, large pages, MCP)
    work_waiting: int = 8  # expensive requests that may wait for them; beyond: 503
    io_threads: int = 4  # threads for requests that wait on PostgreSQL or Redis
    public_url: str = "http://127.0.0.1:8000"  # where clients reach this server (CASE URIs)
    case_public: bool = False  # the CASE paths readable without a key
    # Keyless CASE requests, per client address (a package costs 5): 0 turns it off
    case_public_rate: float = DEFAULT_CASE_PUBLIC_RATE
    case_public_burst: int = DEFAULT_CASE_PUBLIC_BURST
    case_cache_mb: int = 128  # finished CASE answers (packages) kept per process; 0: none
    # Browser origins /mcp answers besides loopback and the public URL's own (DNS rebinding)
    allowed_origins: tuple[str, ...] = ()

    @classmethod
    def from_env(cls) -> Settings:
        """Settings for a worker process started by `edukg serve` (passed via env)."""
        env = os.environ
        return cls(
            db=resolve_db(None),
            base_path=normalize_base_path(env.get("EDUKG_BASE_PATH", DEFAULT_BASE_PATH)),
            read_db=env.get("EDUKG_READ_DB") or None,
            redis=env.get("EDUKG_REDIS") or None,
            rate=float(env.get("EDUKG_RATE", DEFAULT_RATE)),
            burst=int(env.get("EDUKG_BURST", DEFAULT_BURST)),
            refresh=float(env.get("EDUKG_REFRESH", 1.0)),
            access_log=env.get("EDUKG_ACCESS_LOG", "1") != "0",
            cache_max_age=int(env.get("EDUKG_CACHE_MAX_AGE", 60)),
            response_cache_mb=int(env.get("EDUKG_RESPONSE_CACHE_MB", 64)),
            work_threads=int(env.get("EDUKG_WORK_THREADS", 2)),
            work_waiting=int(env.get("EDUKG_WORK_WAITING", 8)),
            io_threads=int(env.get("EDUKG_IO_THREADS", 4)),
            public_url=env.get("EDUKG_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/"),
            case_public=env.get("EDUKG_CASE_PUBLIC", "0") == "1",
            case_public_rate=float(env.get("EDUKG_CASE_PUBLIC_RATE", DEFAULT_CASE_PUBLIC_RATE)),
            case_public_burst=int(env.get("EDUKG_CASE_PUBLIC_BURST", DEFAULT_CASE_PUBLIC_BURST)),
            case_cache_mb=int(env.get("EDUKG_CASE_CACHE_MB", 128)),
            allowed_origins=tuple(
                o.strip().rstrip("/")
                for o in env.get("EDUKG_ALLOWED_ORIGINS", "").split(",")
                if o.strip()
            ),
        )
