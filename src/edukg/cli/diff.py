"""`edukg diff OLDER NEWER`: what changed between two kept releases."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from edukg.cli.output import EXIT_FAILED, EXIT_OK, console, say
from edukg.ingest.changes import CHANGES, ChangesPending, ensure
from edukg.store import ChangeFilter, ChangeStore, database_errors
from edukg.store.base import StoreUnavailable

_WAIT = 3600.0  # seconds to wait for another process computing the same pair


def cmd_diff(args: argparse.Namespace) -> int:
    releases = args.backend.releases()
    changes = args.backend.changes()
    try:
        outcome = ensure(releases, changes, args.older, args.newer, wait=_WAIT)
        if args.quiet:
            return EXIT_OK
        if args.ndjson:
            _ndjson(changes, outcome.pair)
            return EXIT_OK
        table = Table(title=f"Changes from {args.older} to {args.newer}")
        for column in ("label", *CHANGES):
            table.add_column(column, justify="left" if column == "label" else "right")
        for label, per in outcome.counts.items():
            table.add_row(label, *(f"{per[c]:,}" for c in CHANGES))
        table.add_row("all", *(f"{outcome.total(c):,}" for c in CHANGES))
        console.print(table)
        how = "computed" if outcome.computed else "kept since it was computed"
        console.print(f"{how} ({outcome.seconds:.1f} s)")
        return EXIT_OK
    except (LookupError, ChangesPending) as exc:
        say(f"{exc}")
        return EXIT_FAILED
    except database_errors(StoreUnavailable, OSError) as exc:
        say(f"the changes could not be read or computed ({exc})")
        return EXIT_FAILED
    finally:
        changes.close()
        releases.close()


def _ndjson(changes: ChangeStore, pair: str) -> None:
    """Every change with its values, one JSON object per line."""
    after = ""
    out = sys.stdout.buffer
    while True:
        rows = changes.page(pair, ChangeFilter(), after, _PAGE)
        for _, doc, values in rows:
            out.write(doc[:-1] + values + b"}\n")
        if len(rows) < _PAGE:
            break
        after = rows[-1][0]
    out.flush()


_PAGE = 1000
