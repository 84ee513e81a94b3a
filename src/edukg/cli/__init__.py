"""The `edukg` command: a thin layer over the loader, the stores and the server.

Exit codes, for scripts: 0 done; 1 failed, nothing changed (a load, a key operation);
2 a usage error (bad arguments, a database that does not exist), nothing changed;
3 the server could not start (e.g. its port is taken); 4 a load switched the served
data but its semantic index was not finished (run `edukg index`).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import orjson
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from edukg import __version__
from edukg.adapters.config import (
    DEFAULT_BASE_PATH,
    DEFAULT_BURST,
    normalize_base_path,
    resolve_db,
)
from edukg.ingest.builder import DATA_VERSION, LoadSummary, build, load
from edukg.ingest.demo import demo_lines
from edukg.ingest.demo_graph import DEMO_VERSION
from edukg.ingest.errors import LoadError
from edukg.store import (
    BackendMissing,
    KeyInfo,
    KeyStore,
    database_errors,
    is_postgres,
    open_key_store,
    open_store,
    require_postgres,
)
from edukg.store.base import StoreUnavailable
from edukg.store.keys import KeyNameError, keys_path_for

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_SERVER, EXIT_INDEX_UNFINISHED = 0, 1, 2, 3, 4

_err = Console(stderr=True)
_out = Console(highlight=False)


def _say(message: str) -> None:
    """A plain line on stderr: never wrapped, so messages stay greppable and copyable."""
    print(message, file=sys.stderr, flush=True)


def _terminal_bar(amount: ProgressColumn) -> Progress | None:
    """A progress bar showing `amount` on a terminal; None when output is piped or logged."""
    if not sys.stderr.isatty():
        return None
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        amount,
        TimeRemainingColumn(),
        console=_err,
        transient=True,
    )


def _progress_bar() -> tuple[Progress | None, object]:
    """A bar per file of a load, in bytes; nothing when output is piped or logged."""
    bar = _terminal_bar(DownloadColumn())
    if bar is None:
        return None, None
    tasks: dict[str, object] = {}

    def advance(done: int, total: int | None, description: str) -> None:
        if description not in tasks:
            tasks[description] = bar.add_task(description, total=total)
        bar.update(tasks[description], completed=done, total=total)  # type: ignore[arg-type]

    return bar, advance


def _summary(summary: LoadSummary) -> None:
    table = Table(title=f"Loaded data version {summary.data_version}")
    table.add_column("records")
    table.add_column("label")
    table.add_column("count", justify="right")
    for label, count in summary.node_counts.items():
        table.add_row("node", label, f"{count:,}")
    for label, count in summary.relationship_counts.items():
        table.add_row("relationship", label, f"{count:,}")
    table.add_row("", "dangling relationships (endpoint missing)", f"{summary.dangling:,}")
    table.add_row("", "duplicate node identifiers (last kept)", f"{summary.duplicate_nodes:,}")
    table.add_row(
        "", "duplicate relationship identifiers (last kept)", f"{summary.duplicate_relationships:,}"
    )
    table.add_row("", "seconds", f"{summary.seconds:.2f}")
    _out.print(table)
    _out.print(f"content id {summary.content_id[:16]}")


def _index_step(
    db: str, required: bool = False, runtime: str = "auto", after_load: bool = False
) -> int:
    """Build or finish the semantic index; without the model, say so (fail only if asked)."""
    from edukg.ingest.index import index  # noqa: PLC0415
    from edukg.model.encoder import ModelMissing  # noqa: PLC0415

    progress = None
    bar = _terminal_bar(MofNCompleteColumn())
    if bar is not None:
        task = bar.add_task("embedding texts", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

    try:
        if bar is not None:
            with bar:
                summary = index(db, progress, runtime=runtime)
        else:
            summary = index(db, runtime=runtime)
    except ModelMissing as exc:
        _say(f"Semantic index not built: {exc}. Search ranks by words only.")
        return 1 if required else 0
    except LookupError as exc:
        _say(str(exc))
        return 1
    except RuntimeError as exc:  # e.g. another `edukg index` writing the same file
        _say(f"Semantic index not finished: {exc}. Run `edukg index` again to resume.")
        return 1
    except database_errors(OSError) as exc:  # e.g. a full disk
        _say(
            f"Semantic index not finished: it could not be written ({exc}). The loaded data"
            " is served; search ranks by words until `edukg index` completes."
        )
        return EXIT_INDEX_UNFINISHED if after_load else EXIT_FAILED
    if summary.already_complete:
        _say(f"Semantic index complete ({summary.rows:,} texts).")
    else:
        _say(
            f"Semantic index: {summary.rows:,} rows"
            + (f" (resumed at {summary.resumed_at:,})" if summary.resumed_at else "")
            + f", {summary.embedded:,} texts embedded ({summary.runtime}),"
            f" {summary.from_cache:,} from the cache, {summary.seconds:.1f} s."
        )
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    return _index_step(args.db, required=True, runtime=args.runtime)


def cmd_load(args: argparse.Namespace) -> int:
    if args.data_version is not None and not DATA_VERSION.fullmatch(args.data_version):
        _say(
            f"--data-version {args.data_version!r} is not a version: use 1-64 letters, digits,"
            " '.', '_' or '-', starting with a letter or digit (e.g. 1.11.0); nothing was loaded"
        )
        return EXIT_USAGE
    bar, advance = _progress_bar()
    try:
        if bar is not None:
            with bar:
                summary = load(args.source, args.db, args.data_version, advance)  # type: ignore[arg-type]
        else:
            summary = load(args.source, args.db, args.data_version)
    except LoadError as exc:
        _say(f"load failed: {exc}")
        _say("The data being served is unchanged.")
        return EXIT_FAILED
    _summary(summary)
    if summary.data_version == "unknown":
        _say(
            "note: the data version is unknown (no vX.Y.Z segment in the source's path);"
            " responses carry X-Data-Version: unknown. Name it with --data-version,"
            " e.g. --data-version 1.11.0"
        )
    if args.no_index:
        return EXIT_OK
    return _index_step(args.db, after_load=True)


def build_demo(db: str) -> LoadSummary:
    """Build the demo graph into `db` through the ordinary loader."""
    return build([("demo graph", enumerate(demo_lines(), start=1))], db, DEMO_VERSION)


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        _summary(build_demo(args.db))
    except LoadError as exc:
        _say(f"demo failed: {exc}")
        _say("The data being served is unchanged.")
        return 1
    return _index_step(args.db)


def cmd_export(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    if store.info() is None:
        _say(f"nothing is loaded in {args.db}")
        return 1
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name, relationships in (("nodes.jsonl", False), ("relationships.jsonl", True)):
        count = _write_lines(out / name, store.export_lines(relationships))
        _out.print(f"wrote {count:,} records to {out / name}")
    store.close()
    return 0


def _write_lines(path: Path, lines: Iterator[bytes]) -> int:
    temp = path.with_name(path.name + ".partial")
    count = 0
    with open(temp, "wb") as f:
        for line in lines:
            f.write(line)
            f.write(b"\n")
            count += 1
    os.replace(temp, path)
    return count


def cmd_keys(args: argparse.Namespace) -> int:
    creating = args.keys_command == "create"
    if not creating and not is_postgres(args.db) and not keys_path_for(args.db).is_file():
        _say(
            f"no key file for {args.db} ({keys_path_for(args.db)} does not exist): "
            "check --db or $EDUKG_DB; nothing was created"
        )
        return EXIT_USAGE
    keys = open_key_store(args.db, create=creating)
    try:
        return _keys_command(keys, args)
    except database_errors(StoreUnavailable, OSError) as exc:
        what = {"create": "no key was created", "revoke": f"{args.name!r} was NOT revoked"}
        _say(
            f"the key store could not be {'read' if args.keys_command == 'list' else 'written'}"
            f" ({exc}); {what.get(args.keys_command, 'nothing was changed')}"
        )
        return EXIT_FAILED
    finally:
        keys.close()


def _keys_command(keys: KeyStore, args: argparse.Namespace) -> int:
    if args.keys_command == "create":
        try:
            key = keys.create(args.name, args.rate, args.burst)
        except KeyNameError as exc:
            _say(f"cannot create key: {exc}")
            return EXIT_FAILED
        _say(f"Created key {args.name!r}. It is shown once; store it now.")
        print(key)
    elif args.keys_command == "list":
        _list_keys(keys.list(), args.json)
    elif not keys.revoke(args.name):
        _say(f"no live key named {args.name!r}")
        return EXIT_FAILED
    else:
        _out.print(f"revoked {args.name!r}; it is refused from now on")
    return EXIT_OK


def _list_keys(infos: list[KeyInfo], as_json: bool) -> None:
    """Whole names always (`keys revoke` needs them); JSON lines for scripts."""
    if as_json:
        for info in infos:
            print(
                orjson.dumps(
                    {
                        "name": info.name,
                        "createdAt": info.created_at,
                        "last4": info.last4,
                        "revokedAt": info.revoked_at,
                    }
                ).decode()
            )
        return
    table = Table()
    table.add_column("name", no_wrap=True, overflow="ignore")
    for column in ("created", "key ends with", "revoked"):
        table.add_column(column, no_wrap=True)
    for info in infos:
        table.add_row(info.name, info.created_at, f"…{info.last4}", info.revoked_at or "")
    Console(highlight=False, width=max(200, _out.width)).print(table)


def _single_threaded_blas() -> None:
    """One BLAS thread per serving process (before NumPy loads).

    A query's matrices are tiny, so more threads buy little, and idle BLAS threads spin
    on the core that the same request's full-text query needs (measured: p95 of hybrid
    search 53 -> 40 ms, docs/benchmarks.md).
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")


def _serve(args: argparse.Namespace, workers: int, sock: socket.socket | None = None) -> int:
    from edukg.adapters import server  # noqa: PLC0415 - only the serving commands need the server

    _single_threaded_blas()
    if sock is None:
        try:
            sock = server.bind(args.host, args.port)
        except server.PortUnavailable as exc:
            _say(f"{exc}; nothing was started (choose another with --port)")
            return EXIT_NO_SERVER
    # Worker processes read their settings from the environment (config.Settings.from_env).
    os.environ["EDUKG_DB"] = args.db if is_postgres(args.db) else str(Path(args.db).absolute())
    os.environ["EDUKG_BASE_PATH"] = normalize_base_path(args.base_path)
    for name, value in (
        ("EDUKG_READ_DB", args.read_db),
        ("EDUKG_REDIS", args.redis),
        ("EDUKG_RATE", args.rate),
        ("EDUKG_BURST", args.burst),
        ("EDUKG_REFRESH", args.refresh),
        ("EDUKG_CACHE_MAX_AGE", args.cache_max_age),
        ("EDUKG_RESPONSE_CACHE_MB", args.response_cache_mb),
        ("EDUKG_HEADER_TIMEOUT", args.header_timeout),
        ("EDUKG_MAX_CONNECTIONS", args.max_connections),
    ):
        if value is not None:
            os.environ[name] = str(value)
    if workers > 1 and not os.environ.get("EDUKG_REDIS"):
        _say(
            f"note: rate limits are per process with {workers} workers and no --redis; "
            "use --redis for limits shared by every process and host"
        )
    os.environ.setdefault("EDUKG_ACCESS_LOG", "0" if args.no_access_log else "1")
    server.run(
        server.config(
            "edukg.app.core:create_app",
            factory=True,
            workers=workers,
            log_level="info",
            log_config=_LOG_CONFIG,
            timeout_graceful_shutdown=30,
        ),
        sock,
    )
    return EXIT_OK


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
    return _serve(args, args.workers)


def cmd_quickstart(args: argparse.Namespace) -> int:
    from edukg.adapters import server  # noqa: PLC0415

    try:  # first: on a taken port, no key is made and no URL printed
        sock = server.bind(args.host, args.port)
    except server.PortUnavailable as exc:
        _say(f"{exc}; nothing was started and no key was made (try --port, or PORT= for make demo)")
        return EXIT_NO_SERVER
    store = open_store(args.db)
    info = store.info()
    store.close()
    if info is None:
        _say(f"Building the demo graph into {args.db} ...")
        build_demo(args.db)
    else:
        _say(f"Serving the data already in {args.db} (version {info.data_version}).")
    _index_step(args.db)
    keys = open_key_store(args.db, create=True)
    name = "quickstart-" + datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    key = keys.create(name)
    keys.close()
    base = normalize_base_path(args.base_path)
    url = f"http://{args.host}:{args.port}"
    print(  # plain print: a wrapped key or curl line could not be copied
        f"\nedukg {__version__} is starting.\n"
        f"  API:       {url}{base}\n"
        f"  Explorer:  {url}/explore\n"
        f"  Docs:      {url}/docs\n"
        f"  Health:    {url}/healthz\n"
        f"  API key:   {key}   (named {name}; revoke with: edukg keys revoke {name})\n\n"
        f"Try:\n  curl -H 'x-api-key: {key}' '{url}{base}/standards-frameworks'\n",
        flush=True,
    )
    return _serve(args, 1, sock)


def cmd_generate(args: argparse.Namespace) -> int:
    from edukg.ingest import synthetic  # noqa: PLC0415

    scale = 1.0 if args.scale == "full" else float(args.scale)
    if not 0 < scale <= 10:
        _say("--scale is 'full' or a fraction such as 0.1")
        return 2
    started = time.monotonic()
    counts = synthetic.write(Path(args.outdir), scale, args.seed)
    for name, n in counts.items():
        _out.print(f"wrote {n:,} lines to {Path(args.outdir) / name}")
    _out.print(f"seconds {time.monotonic() - started:.1f}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    _single_threaded_blas()
    from edukg.adapters.mcp import build_server  # noqa: PLC0415 - loads the MCP SDK

    if not args.stdio:
        _say("edukg mcp speaks stdio (--stdio); over HTTP, `edukg serve` answers at /mcp.")
        return 2
    store = open_store(args.db)
    try:
        build_server(store).run("stdio")
    finally:
        store.close()
    return 0


def parser() -> argparse.ArgumentParser:
    """The command-line interface (its help is the CLI reference)."""
    p = argparse.ArgumentParser(
        prog="edukg", description="Serve the Learning Commons Knowledge Graph export over HTTP."
    )
    p.add_argument("--version", action="version", version=f"edukg {__version__}")
    db_help = "SQLite file or postgresql:// URL (default: $EDUKG_DB, else ./edukg.db)"
    # Also before the command (`edukg --db x.db keys list`); after it, it wins.
    p.add_argument("--db", dest="global_db", default=None, help=db_help)
    sub = p.add_subparsers(dest="command", required=True)

    def with_db(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("--db", default=None, help=db_help)
        return cmd

    c = with_db(sub.add_parser("load", help="load an export (files, a directory or URLs)"))
    c.add_argument("source", nargs="+", help="directory, nodes/relationships files, or URLs")
    c.add_argument("--data-version", default=None, help="export release, e.g. 1.11.0")
    c.add_argument(
        "--no-index", action="store_true",
        help="skip the semantic index (run `edukg index` later; search ranks by words meanwhile)",
    )  # fmt: skip
    c.set_defaults(func=cmd_load)

    c = with_db(
        sub.add_parser(
            "index",
            help="embed record texts for search by meaning (resumable; `load` runs it too)",
        )
    )
    c.add_argument(
        "--runtime", choices=("auto", "onnx", "numpy"), default="auto",
        help="onnx: int8 ONNX Runtime, about 3x faster (pip install 'edukg[index]');"
        " numpy: float32; auto (default): onnx where installed",
    )  # fmt: skip
    c.set_defaults(func=cmd_index)

    def with_server(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("--host", default="127.0.0.1")
        cmd.add_argument("--port", type=int, default=8000)
        cmd.add_argument("--base-path", default=DEFAULT_BASE_PATH)
        cmd.add_argument(
            "--read-db", default=os.environ.get("EDUKG_READ_DB"),
            help="a read replica for data reads (keys are always read from --db)",
        )  # fmt: skip
        cmd.add_argument(
            "--redis", default=os.environ.get("EDUKG_REDIS"),
            help="redis://host:port/db for rate limits shared by all processes and hosts",
        )  # fmt: skip
        cmd.add_argument(
            "--rate", type=float, default=None,
            help="default requests per second for keys without their own (default: no limit;"
            " 0: no limit)",
        )  # fmt: skip
        cmd.add_argument(
            "--burst", type=int, default=None,
            help=f"default requests per key at once (default {DEFAULT_BURST})",
        )  # fmt: skip
        cmd.add_argument(
            "--cache-max-age", type=int, default=None,
            help="seconds clients may reuse a data response (Cache-Control; default 60)",
        )  # fmt: skip
        cmd.add_argument(
            "--response-cache-mb", type=int, default=None,
            help="MiB of finished responses each worker keeps, by ETag (default 64; 0: off)",
        )  # fmt: skip
        cmd.add_argument(
            "--no-access-log", action="store_true",
            help="do not write one JSON line per request to stdout",
        )  # fmt: skip
        cmd.add_argument(
            "--header-timeout", type=float, default=None,
            help="seconds a connection has to send a complete request head (default 10)",
        )  # fmt: skip
        cmd.add_argument(
            "--max-connections", type=int, default=None,
            help="open connections per worker; idle ones are closed first (default 1000)",
        )  # fmt: skip
        cmd.add_argument(
            "--refresh", type=float, default=None,
            help="PostgreSQL: seconds between looks for a newly loaded version (default 1)",
        )  # fmt: skip
        return cmd

    c = with_server(with_db(sub.add_parser("serve", help="serve the loaded data over HTTP")))
    c.add_argument("--workers", type=int, default=1, help="worker processes (one per core)")
    c.set_defaults(func=cmd_serve)

    c = with_server(
        with_db(sub.add_parser("quickstart", help="demo data if none, a fresh key, then serve"))
    )
    c.set_defaults(func=cmd_quickstart)

    keys = sub.add_parser("keys", help="create, list and revoke API keys")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    c = with_db(ksub.add_parser("create", help="make a key; prints it on the last line"))
    c.add_argument("name")
    c.add_argument("--rate", type=float, default=None, help="its own requests per second (0: none)")
    c.add_argument("--burst", type=int, default=None, help="its own requests at once")
    c = with_db(ksub.add_parser("list", help="names, creation time, last 4 characters"))
    c.add_argument("--json", action="store_true", help="one JSON object per line, for scripts")
    c = with_db(ksub.add_parser("revoke", help="revoke a key at once"))
    c.add_argument("name")
    keys.set_defaults(func=cmd_keys)

    c = with_db(sub.add_parser("demo", help="build the synthetic demo graph into the database"))
    c.set_defaults(func=cmd_demo)

    c = sub.add_parser("generate", help="write a synthetic export at the real one's scale")
    c.add_argument("outdir")
    c.add_argument("--scale", default="full", help="'full' (export v1.11.0's counts) or a fraction")
    c.add_argument("--seed", type=int, default=0)
    c.set_defaults(func=cmd_generate)

    c = with_db(
        sub.add_parser("mcp", help="the MCP tool server over stdio, for desktop assistants")
    )
    c.add_argument("--stdio", action="store_true", help="speak MCP on stdin/stdout")
    c.set_defaults(func=cmd_mcp)

    c = with_db(sub.add_parser("export", help="write nodes.jsonl and relationships.jsonl"))
    c.add_argument("outdir")
    c.set_defaults(func=cmd_export)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `edukg` console script."""
    args = parser().parse_args(argv)
    args.db = resolve_db(getattr(args, "db", None) or args.global_db)
    if args.command in _READS_DATA and not is_postgres(args.db) and not Path(args.db).is_file():
        _say(f"nothing is loaded at {args.db} (no such file): check --db or $EDUKG_DB")
        return EXIT_FAILED
    if is_postgres(args.db):
        try:
            require_postgres()
        except BackendMissing as exc:
            _say(str(exc))
            return EXIT_USAGE
    return int(args.func(args))


# Commands that read loaded data: on a SQLite file that is not there, they say so rather
# than start on an empty database.
_READS_DATA = frozenset({"index", "export", "mcp"})
