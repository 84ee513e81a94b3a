"""Where edukg finds its data, and how it serves it: every setting, declared once.

Each field of `Settings` carries its option (`Option`): the flag of `edukg serve` and
`quickstart`, the environment variable (how `serve` hands settings to its worker
processes), the help line and how a value is read. The CLI's parser, `--help`,
docs/cli.md (generated from the parser), `serve`'s hand-over and the workers'
`Settings.from_env` all read this one declaration. A stdlib dataclass rather than
pydantic-settings: some twenty plain values need no validation library, and the request
path never touches them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

DEFAULT_DB = "edukg.db"
DEFAULT_BASE_PATH = "/knowledge-graph/v0"
# No per-key limit unless one is set (`serve --rate` or `keys create --rate`): a
# self-hosted server should not throttle its own operator. Public deployments set one
# (README, "Scale out"); the burst applies only where a rate does.
DEFAULT_RATE = 0.0  # requests per second per key, sustained; 0: no limit
DEFAULT_BURST = 40  # requests per key at once
# Keyless CASE clients (serve --case-public), per address: an importer's pace, not a flood.
DEFAULT_CASE_PUBLIC_RATE = 2.0
DEFAULT_CASE_PUBLIC_BURST = 20


def resolve_db(db: str | None) -> str:
    """The database location: the `--db` value, else `$EDUKG_DB`, else ./edukg.db."""
    return db or os.environ.get("EDUKG_DB") or DEFAULT_DB


def normalize_base_path(base_path: str) -> str:
    """`knowledge-graph/v0/` -> `/knowledge-graph/v0`; `/` -> ``."""
    stripped = base_path.strip().strip("/")
    return f"/{stripped}" if stripped else ""


def _origins(text: str) -> tuple[str, ...]:
    return tuple(o.strip().rstrip("/") for o in text.split(",") if o.strip())


@dataclass(frozen=True)
class Option:
    """How one setting is given: its flag, environment variable, help and reading."""

    flag: str | None  # None: no flag of its own (--db is every command's)
    env: str
    help: str
    read: Callable[[str], Any] = str  # the environment variable's text to a value
    kind: str = "value"  # "value", "switch" (a flag that turns it on), "off" (turns it off),
    # "many" (a repeatable flag; a comma-separated variable)
    metavar: str | None = None
    serve_only: bool = False  # `serve` has it, `quickstart` does not
    shown_default: str | None = None  # the default as --help says it, when not the value


def _option(default: Any, flag: str | None, env: str, help: str, **how: Any) -> Any:
    return field(default=default, metadata={"option": Option(flag, env, help, **how)})


def _bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Settings:
    """Everything a serving process needs to know (see the module's docstring)."""

    db: str = _option(DEFAULT_DB, None, "EDUKG_DB", "the database (every command's --db)")
    host: str = _option("127.0.0.1", "--host", "EDUKG_HOST",
                        "the address to listen on (0.0.0.0: every interface)")  # fmt: skip
    port: int = _option(8000, "--port", "EDUKG_PORT", "the TCP port to listen on", read=int)
    workers: int = _option(1, "--workers", "EDUKG_WORKERS",
                           "worker processes (one per core)", read=int, serve_only=True, metavar="N")  # fmt: skip
    base_path: str = _option(DEFAULT_BASE_PATH, "--base-path", "EDUKG_BASE_PATH",
                             "where the API's operations live (the hosted API's path)",
                             read=normalize_base_path, metavar="PATH")  # fmt: skip
    read_db: str | None = _option(None, "--read-db", "EDUKG_READ_DB",
                                  "a read replica for data reads (keys are always read from"
                                  " --db)", metavar="URL", shown_default="none")  # fmt: skip
    redis: str | None = _option(None, "--redis", "EDUKG_REDIS",
                                "redis://host:port/db for rate limits shared by all processes"
                                " and hosts (without it, limits are per process)", metavar="URL", shown_default="none")  # fmt: skip
    rate: float = _option(DEFAULT_RATE, "--rate", "EDUKG_RATE",
                          "default requests per second for keys without their own (0: no"
                          " limit)", read=float, shown_default="0, no limit", metavar="PER_SECOND")  # fmt: skip
    burst: int = _option(DEFAULT_BURST, "--burst", "EDUKG_BURST",
                         "default requests per key at once", read=int, metavar="N")  # fmt: skip
    refresh: float = _option(1.0, "--refresh", "EDUKG_REFRESH",
                             "PostgreSQL: seconds between looks for a newly loaded version",
                             read=float, metavar="SECONDS")  # fmt: skip
    access_log: bool = _option(True, "--no-access-log", "EDUKG_ACCESS_LOG",
                               "do not write one JSON line per request to stdout",
                               read=_bool, kind="off")  # fmt: skip
    cache_max_age: int = _option(60, "--cache-max-age", "EDUKG_CACHE_MAX_AGE",
                                 "seconds clients may reuse a data response (Cache-Control)",
                                 read=int, metavar="SECONDS")  # fmt: skip
    response_cache_mb: int = _option(64, "--response-cache-mb", "EDUKG_RESPONSE_CACHE_MB",
                                     "MiB of finished responses each worker keeps (0: off)",
                                     read=int, metavar="MB")  # fmt: skip
    work_threads: int = _option(2, "--work-threads", "EDUKG_WORK_THREADS",
                                "threads per worker for expensive requests (searches, large"
                                " pages, MCP)", read=int, metavar="N")  # fmt: skip
    work_waiting: int = _option(8, "--work-waiting", "EDUKG_WORK_WAITING",
                                "expensive requests that may wait for those threads; beyond,"
                                " 503", read=int, metavar="N")  # fmt: skip
    io_threads: int = _option(32, "--io-threads", "EDUKG_IO_THREADS",
                              "most threads per worker for requests that wait on PostgreSQL"
                              " or Redis, made as concurrent requests need them (each keeps"
                              " one PostgreSQL connection once used)", read=int, metavar="N")  # fmt: skip
    statement_seconds: float = _option(5.0, "--statement-seconds", "EDUKG_STATEMENT_SECONDS",
                                       "how long one read of the data may run (SQLite and"
                                       " PostgreSQL alike) before it is stopped and its request"
                                       " answered 503", read=float, metavar="SECONDS")  # fmt: skip
    header_timeout: float = _option(10.0, "--header-timeout", "EDUKG_HEADER_TIMEOUT",
                                    "seconds a connection has to send a complete request"
                                    " head", read=float, metavar="SECONDS")  # fmt: skip
    max_connections: int = _option(1000, "--max-connections", "EDUKG_MAX_CONNECTIONS",
                                   "open connections per worker; beyond it, those waiting"
                                   " longest for their client are closed first", read=int, metavar="N")  # fmt: skip
    public_url: str = _option("", "--public-url", "EDUKG_PUBLIC_URL",
                              "the URL clients reach this server at, for CASE URIs",
                              read=lambda t: t.rstrip("/"),
                              shown_default="http://HOST:PORT", metavar="URL")  # fmt: skip
    allowed_origins: tuple[str, ...] = _option(
        (), "--allowed-origin", "EDUKG_ALLOWED_ORIGINS",
        "a browser origin (scheme://host[:port]) that may call /mcp, besides loopback and the"
        " public URL's own; repeatable", read=_origins, kind="many", metavar="ORIGIN",
        shown_default="none",
    )  # fmt: skip
    case_public: bool = _option(False, "--case-public", "EDUKG_CASE_PUBLIC",
                                "serve the CASE paths (/ims/case/...) without a key, as most"
                                " CASE providers do", read=_bool, kind="switch")  # fmt: skip
    case_public_rate: float = _option(DEFAULT_CASE_PUBLIC_RATE, "--case-public-rate",
                                      "EDUKG_CASE_PUBLIC_RATE",
                                      "with --case-public: requests per second each client"
                                      " address may make without a key (a package costs 5;"
                                      " 0: no limit)", read=float, metavar="RATE")  # fmt: skip
    case_public_burst: int = _option(DEFAULT_CASE_PUBLIC_BURST, "--case-public-burst",
                                     "EDUKG_CASE_PUBLIC_BURST",
                                     "with --case-public: the burst a keyless address may"
                                     " make at once", read=int, metavar="N")  # fmt: skip
    case_cache_mb: int = _option(128, "--case-cache-mb", "EDUKG_CASE_CACHE_MB",
                                 "finished CASE answers (packages) kept per worker, built once"
                                 " per release (0: none)", read=int, metavar="MB")  # fmt: skip
    metrics_dir: str = _option("", None, "EDUKG_METRICS_DIR",
                               "the private directory this server's workers keep their"
                               " figures in (serve makes it, and removes it as it stops)")  # fmt: skip

    def __post_init__(self) -> None:
        if not self.public_url:  # CASE URIs name this server as its clients reach it
            object.__setattr__(self, "public_url", f"http://{_reach(self.host)}:{self.port}")

    @classmethod
    def from_env(cls) -> Settings:
        """The settings `edukg serve` handed its worker processes (and defaults)."""
        given: dict[str, Any] = {}
        for name, option in options():
            text = os.environ.get(option.env)
            if text or (text is not None and option.kind != "value"):
                given[name] = option.read(text)
        given["db"] = resolve_db(None)
        return cls(**given)


def options() -> Iterator[tuple[str, Option]]:
    """Every setting's field name and option, in declaration order."""
    for declared in dataclasses.fields(Settings):
        yield declared.name, declared.metadata["option"]


def default_of(name: str) -> Any:
    """A setting's default value."""
    return next(f.default for f in dataclasses.fields(Settings) if f.name == name)


def to_env(option: Option, value: Any) -> str:
    """A value as its environment variable holds it ("" for none)."""
    if value is None:
        return ""
    if option.kind in ("switch", "off"):
        return "1" if value else "0"
    if option.kind == "many":
        return ",".join(value)
    return str(value)


def _reach(host: str) -> str:
    return f"[{host}]" if ":" in host else host
