"""The commands that load, index, export and generate data, and the MCP stdio server."""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from edukg.cli.indexing import index_detached, index_step
from edukg.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    console,
    print_summary,
    progress_bar,
    say,
    single_threaded_blas,
)
from edukg.ingest.builder import LoadSummary, build, load
from edukg.ingest.demo import demo_lines
from edukg.ingest.demo_graph import DEMO_VERSION
from edukg.ingest.errors import LoadArgumentError, LoadError
from edukg.ingest.limits import LoadLimits
from edukg.store import Backend


def cmd_index(args: argparse.Namespace) -> int:
    return index_step(args.backend, required=True)


def cmd_load(args: argparse.Namespace) -> int:
    missing = args.backend.unmade()
    if missing is not None:  # a SQLite file is made by the load; a database is not
        say(f"{missing}; nothing was loaded")
        return EXIT_USAGE
    limits = LoadLimits.of(
        _megabytes(args.max_download, "EDUKG_MAX_DOWNLOAD_MB"),
        _megabytes(args.max_package_mb, "EDUKG_MAX_PACKAGE_MB"),
    )
    bar, advance = progress_bar()
    try:
        with bar if bar is not None else contextlib.nullcontext():  # a bar on a terminal only
            summary = load(args.source, args.backend, args.data_version, advance,  # type: ignore[arg-type]
                           args.replace, args.keep, limits)  # fmt: skip
    except LoadArgumentError as exc:
        say(f"{exc}; nothing was loaded")
        return EXIT_USAGE
    except LoadError as exc:
        say(f"load failed: {exc}")
        say("The data being served is unchanged.")
        return EXIT_FAILED
    print_summary(summary)
    if summary.named_by_content:
        say(
            "note: no version was given and the source's path names none (no vX.Y.Z"
            f" segment): this release is named {summary.data_version} (the day and its"
            " content id; responses carry it in X-Data-Version). Name a release with"
            " --data-version, e.g. --data-version 1.11.0"
        )
    if args.no_index:
        return EXIT_OK
    if args.wait_index:
        return index_step(args.backend, after_load=True)
    return index_detached(args.backend)


def _megabytes(flag: int | None, variable: str) -> int | None:
    """A size in MiB: the flag's, else its variable's, else None (the default)."""
    if flag is not None:
        return flag
    given = os.environ.get(variable)
    return int(given) if given else None


def build_demo(db: str | Backend) -> LoadSummary:
    """Build the demo graph into `db` through the ordinary loader."""
    return build([("demo graph", enumerate(demo_lines(), start=1))], db, DEMO_VERSION)


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        print_summary(build_demo(args.backend))
    except LoadError as exc:
        say(f"demo failed: {exc}")
        say("The data being served is unchanged.")
        return 1
    return index_step(args.backend)


def cmd_export(args: argparse.Namespace) -> int:
    store = args.backend.store()
    if store.info() is None:
        say(f"nothing is loaded in {args.db}")
        return 1
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name, relationships in (("nodes.jsonl", False), ("relationships.jsonl", True)):
        count = _write_lines(out / name, store.export_lines(relationships))
        console.print(f"wrote {count:,} records to {out / name}")
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


def cmd_generate(args: argparse.Namespace) -> int:
    from edukg.ingest import synthetic  # noqa: PLC0415

    scale = 1.0 if args.scale == "full" else float(args.scale)
    if not 0 < scale <= 10:
        say("--scale is 'full' or a fraction such as 0.1")
        return 2
    started = time.monotonic()
    counts = synthetic.write(Path(args.outdir), scale, args.seed)
    for name, n in counts.items():
        console.print(f"wrote {n:,} lines to {Path(args.outdir) / name}")
    console.print(f"seconds {time.monotonic() - started:.1f}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    single_threaded_blas()
    from edukg.adapters.mcp import build_server  # noqa: PLC0415 - loads the MCP SDK
    from edukg.adapters.mcp_stdio import run_stdio  # noqa: PLC0415

    if not args.stdio:
        say("edukg mcp speaks stdio (--stdio); over HTTP, `edukg serve` answers at /mcp.")
        return 2
    store = args.backend.store()
    try:
        run_stdio(build_server(store))
    finally:
        store.close()
    return 0
