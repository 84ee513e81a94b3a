"""What every command shares: exit codes, messages, progress bars, the load summary,
and the serving processes' thread settings."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from edukg.ingest.builder import LoadSummary
from edukg.ingest.case_import import PackageOutcome

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_SERVER, EXIT_INDEX_UNFINISHED = 0, 1, 2, 3, 4
# The one statement of the exit codes: `--help`, docs/cli.md and README.md all print it.
EXIT_RULE = (
    "Exit codes: 0 done; 1 failed, nothing changed (a load, a key operation, a command on a"
    " database that does not exist or holds nothing); 2 a usage error (bad arguments),"
    " nothing changed; 3 the server could not start (its port is taken); 4 a load with"
    " --wait-index switched the served data but its semantic index was not finished (run"
    " `edukg index`)."
)


err = Console(stderr=True)


console = Console(highlight=False)


def cell(text: str) -> Text:
    """A table cell shown as written: a record's or a user's text is never read as rich
    markup ("the interval [a, b]" keeps its brackets; "[/b]" is no error)."""
    return Text(text)


def say(message: str) -> None:
    """A plain line on stderr: never wrapped, so messages stay greppable and copyable."""
    print(message, file=sys.stderr, flush=True)


def terminal_bar(amount: ProgressColumn) -> Progress | None:
    """A progress bar showing `amount` on a terminal; None when output is piped or logged."""
    if not sys.stderr.isatty():
        return None
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        amount,
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )


def progress_bar() -> tuple[Progress | None, object]:
    """A bar per file of a load, in bytes; nothing when output is piped or logged."""
    bar = terminal_bar(DownloadColumn())
    if bar is None:
        return None, None
    tasks: dict[str, object] = {}

    def advance(done: int, total: int | None, description: str) -> None:
        if description not in tasks:
            tasks[description] = bar.add_task(description, total=total)
        bar.update(tasks[description], completed=done, total=total)  # type: ignore[arg-type]

    return bar, advance


def size_text(size: int) -> str:
    """Bytes as people read them (1 decimal, binary units)."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GiB"  # pragma: no cover - the loop returns


def print_summary(summary: LoadSummary) -> None:
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
    console.print(table)
    console.print(f"content id {summary.content_id[:16]}")
    for package in summary.case:
        _print_package(package)
    if isinstance(summary.changes, str):
        console.print(f"changes from the previous release: {summary.changes}")
    elif summary.changes is not None:
        c = summary.changes
        console.print(f"changes from {c.older}: {c.total('added'):,} added, "
                      f"{c.total('removed'):,} removed, {c.total('modified'):,} modified "
                      f"({c.seconds:.1f} s; edukg diff {c.older} {c.newer})")  # fmt: skip
    if summary.dropped:
        console.print(f"dropped releases (--keep): {', '.join(summary.dropped)}")
    if summary.releases:
        total = sum(r.size_bytes for r in summary.releases)
        names = ", ".join(r.data_version + (" (current)" if r.current else "")
                          for r in summary.releases)  # fmt: skip
        console.print(f"releases kept: {names}; {size_text(total)} on disk")


_SHOWN_PROBLEMS = 10


def _print_package(package: PackageOutcome) -> None:
    """One CASE package's line: what it added, removed and changed, and its slips."""
    what = "revision of an export framework" if package.revision_of_export else "framework"
    console.print(
        f"CASE {package.case_version} {what} {package.framework!r} from {package.name}: "
        f"{package.items:,} items ({package.added:,} added, {package.removed:,} removed, "
        f"{package.changed:,} changed), {package.associations:,} associations, "
        f"{len(package.problems):,} problems"
    )
    for problem in package.problems[:_SHOWN_PROBLEMS]:
        console.print(f"  {package.name}: {problem}", markup=False)
    if len(package.problems) > _SHOWN_PROBLEMS:
        console.print(f"  ... and {len(package.problems) - _SHOWN_PROBLEMS:,} more")


def single_threaded_blas() -> None:
    """One BLAS thread per serving process (before NumPy loads).

    A query's matrices are tiny, so more threads buy little, and idle BLAS threads spin
    on the core that the same request's full-text query needs (measured: p95 of hybrid
    search 53 -> 40 ms, docs/benchmarks.md).
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
