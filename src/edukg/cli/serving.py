"""`edukg serve` and `edukg quickstart`: settings into the environment, then uvicorn."""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import socket
import threading
import time
from typing import Any

import httpx

from edukg import __version__
from edukg.adapters import metrics_files
from edukg.adapters.config import Settings, options, to_env
from edukg.cli.data import build_demo
from edukg.cli.indexing import index_step
from edukg.cli.output import (
    EXIT_FAILED,
    EXIT_NO_SERVER,
    EXIT_OK,
    say,
    single_threaded_blas,
)
from edukg.ingest.builder import remove_leftovers


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings of `serve` or `quickstart`: its flags over the environment over the
    defaults (adapters.config declares each)."""
    base = Settings.from_env()
    given: dict[str, Any] = {}
    for name, option in options():
        value = getattr(args, name, None)
        if option.flag is not None and value is not None:
            given[name] = tuple(value) if option.kind == "many" else value
    db = args.backend.located
    # Unless given, CASE URIs name this server at its own host and port.
    public = given.get("public_url") or os.environ.get("EDUKG_PUBLIC_URL") or ""
    return dataclasses.replace(base, **{**given, "db": db, "public_url": public})


def _serve(settings: Settings, sock: socket.socket | None = None, banner: str = "") -> int:
    from edukg.adapters import server  # noqa: PLC0415 - only the serving commands need the server

    single_threaded_blas()
    if sock is None:
        try:
            sock = server.bind(settings.host, settings.port)
        except server.PortUnavailable as exc:
            say(f"{exc}; nothing was started (choose another with --port)")
            return EXIT_NO_SERVER
    # This server's own metrics directory: counters start from zero, no other server of the
    # same database counts here, and it goes when the server stops.
    figures = metrics_files.private_dir()
    settings = dataclasses.replace(settings, metrics_dir=str(figures))
    # Worker processes read their settings from the environment (Settings.from_env).
    for name, option in options():
        os.environ[option.env] = to_env(option, getattr(settings, name))
    if settings.workers > 1 and not settings.redis:
        say(
            f"note: rate limits are per process with {settings.workers} workers and no --redis;"
            " use --redis for limits shared by every process and host"
        )
    url = f"http://{_loopback(settings.host)}:{settings.port}"
    threading.Thread(
        target=_announce, args=(url, banner or _serving(settings)), name="edukg-banner",
        daemon=True,
    ).start()  # fmt: skip
    # uvicorn stops on SIGTERM and then raises it again with the handler it found: this
    # one unwinds the stack, so that the directory is removed as the server stops.
    signal.signal(signal.SIGTERM, _stopped)
    try:
        server.run(
            server.config(
                "edukg.app.core:create_app",
                factory=True,
                workers=settings.workers,
                log_level="info",
                log_config=_LOG_CONFIG,
                timeout_graceful_shutdown=30,
            ),
            sock,
        )
    finally:
        metrics_files.remove(figures)
    return EXIT_OK


def _stopped(_signum: int, _frame: object) -> None:
    raise SystemExit(EXIT_OK)


def _serving(settings: Settings) -> str:
    url = f"http://{settings.host}:{settings.port}"
    base = settings.base_path
    return (f"edukg {__version__} is serving {url}: the API at {url}{base}, the explorer at"
            f" {url}/explore, the docs at {url}/docs. Ctrl+C stops it.")  # fmt: skip


def _loopback(host: str) -> str:
    """Where this machine reaches a server listening on `host`."""
    if host in ("0.0.0.0", ""):  # noqa: S104 - a comparison, not a bind
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _announce(url: str, banner: str) -> None:
    """Print `banner` once the server answers (`/healthz`), so that a command copied from
    it works at once; nothing if it never does within two minutes."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/healthz", timeout=2)
        except httpx.HTTPError:
            time.sleep(0.05)
            continue
        print(banner, flush=True)  # plain print: a wrapped key or curl line could not be copied
        return


# uvicorn's own logging, plus the access log: one JSON line per request on stdout.
_LOG_CONFIG: dict[str, object] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(levelname)s: %(name)s: %(message)s"},
        "line": {"format": "%(message)s"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "stream": "ext://sys.stderr",
        },
        "stdout": {
            "class": "logging.StreamHandler",
            "formatter": "line",
            "stream": "ext://sys.stdout",
        },
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "edukg": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "edukg.access": {"handlers": ["stdout"], "level": "INFO", "propagate": False},
    },
}


def cmd_serve(args: argparse.Namespace) -> int:
    # A mistyped --db would otherwise start a server that answers 503 to everything.
    missing = args.backend.missing()
    if missing is not None:
        say(f"{missing}; nothing was started. Load data into it first (edukg load EXPORT"
            f" --db {args.db}), or try `edukg quickstart` for the demo")  # fmt: skip
        return EXIT_FAILED
    remove_leftovers(args.backend)  # of loads killed before this server started
    return _serve(settings_of(args))


def cmd_quickstart(args: argparse.Namespace) -> int:
    from edukg.adapters import server  # noqa: PLC0415

    settings = dataclasses.replace(settings_of(args), workers=1)
    try:  # first: on a taken port, no key is made and no URL printed
        sock = server.bind(settings.host, settings.port)
    except server.PortUnavailable as exc:
        say(f"{exc}; nothing was started and no key was made (try --port, or PORT= for make demo)")
        return EXIT_NO_SERVER
    store = args.backend.store()
    info = store.info()
    store.close()
    if info is None:
        say(f"Building the demo graph into {args.db} ...")
        build_demo(args.backend)
    else:
        say(f"Serving the data already in {args.db} (version {info.data_version}).")
    index_step(args.backend)
    keys = args.backend.keys(create=True)
    # One demo key: each run replaces the last (it was shown once and cannot be shown
    # again), so runs do not pile up live keys.
    name = "quickstart"
    replaced = keys.revoke(name)
    key = keys.create(name)
    keys.close()
    if replaced:
        say(f"The previous {name!r} key was revoked; this run's key replaces it.")
    base = settings.base_path
    url = f"http://{settings.host}:{settings.port}"
    banner = (
        f"\nedukg {__version__} is ready.\n"
        f"  API:       {url}{base}\n"
        f"  Explorer:  {url}/explore\n"
        f"  Docs:      {url}/docs\n"
        f"  Health:    {url}/healthz\n"
        f"  API key:   {key}   (named {name}; revoke with: edukg keys revoke {name})\n\n"
        f"Try:\n  curl -H 'x-api-key: {key}' '{url}{base}/standards-frameworks'\n"
    )
    say("Starting the server ...")
    return _serve(settings, sock, banner)
