"""`edukg crosswalk FROM TO` and `edukg coverage CURRICULUM FRAMEWORK`: the alignment
operations of the API, for spreadsheets and scripts (the rows are the API's rows)."""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.table import Table

from edukg.cli.notation import plain
from edukg.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, console, say
from edukg.model.alignment import FrameworkItemBrief, encode
from edukg.model.errors import ApiError, ValidationError
from edukg.model.framework_rows import (
    AlignedContent,
    CoverageCounts,
    CoverageRow,
    DomainCoverage,
    FrameworkCrosswalk,
    GradeComparison,
    GradeCoverage,
)
from edukg.model.vocabulary import code_order, grade_mask
from edukg.services import comparison, coverage
from edukg.services.comparison import PairFilter
from edukg.services.graph import loaded
from edukg.store import Backend, database_errors
from edukg.store.base import Store, StoreUnavailable


def cmd_crosswalk(args: argparse.Namespace) -> int:
    def run(store: Store) -> int:
        source = comparison.resolve_framework(store, args.source)
        target = comparison.resolve_framework(store, args.target)
        where = _filter(args)
        sources, pairs = comparison.framework_pairs(store, source, target, where)
        rows = sorted((p.row() for p in pairs), key=lambda r: (_order(r.source), _order(r.target)))
        if _machine_output(args, rows, _crosswalk_columns, _CROSSWALK_COLUMNS):
            return EXIT_OK
        table = Table(title=f"{len(rows):,} crosswalks")
        for column in ("source", "target", "jaccard", "shared", "method"):
            table.add_column(column)
        for row in rows:
            table.add_row(
                _code(row.source), _code(row.target), f"{row.jaccard or 0:.2f}",
                str(row.sharedLCCount), row.method,
            )  # fmt: skip
        console.print(table)
        # The summary last: hundreds of rows would scroll it off a terminal.
        summary = comparison.grade_summary(sources, pairs, where.grades_mask)
        _summary_table(f"{args.source} -> {args.target}", summary)
        return EXIT_OK

    return _with_store(args, run)


def cmd_coverage(args: argparse.Namespace) -> int:
    def run(store: Store) -> int:
        framework = comparison.resolve_framework(store, args.framework)
        result = coverage.covered(store, args.curriculum, framework, _filter(args))
        rows = sorted((c.row() for c in result.standards), key=lambda r: _order(r.standard))
        summary = coverage.summary(result)
        if _machine_output(args, rows, _coverage_columns, _COVERAGE_COLUMNS):
            if summary.note:
                say(summary.note)  # on stderr: the rows stay machine-readable
            return EXIT_OK
        listing = Table(title="Standards")
        for column in ("standard", "domain", "status", "covered by"):
            listing.add_column(column)
        for row in rows:
            domain = row.domain.code if row.domain is not None else None
            listing.add_row(_code(row.standard), domain or "", row.status, _covered_by(row))
        console.print(listing)
        # The summaries last: hundreds of rows would scroll them off a terminal.
        parts: tuple[tuple[str, str, Sequence[GradeCoverage | DomainCoverage]], ...] = (
            ("by domain", "domain", summary.byDomain), ("by grade", "grade", summary.byGrade),
        )  # fmt: skip
        for title, label, counted in parts:
            table = Table(title=f"{args.curriculum} in {args.framework}, {title}")
            for column in (label, "standards", "direct", "via crosswalk", "not covered"):
                table.add_column(column, justify="left" if column == label else "right")
            for part in counted:
                table.add_row(_part_name(part), *_counts(part))
            table.add_row("all", *_counts(summary.total))
            console.print(table)
        if summary.note:
            say(summary.note)
        return EXIT_OK

    return _with_store(args, run)


def _part_name(part: GradeCoverage | DomainCoverage) -> str:
    """A summary row's name: its grade, or its domain's code (else its description)."""
    if isinstance(part, GradeCoverage):
        return str(part.gradeLevel)
    domain = part.domain
    return str((domain and (domain.code or plain(domain.description or ""))) or "(none)")


def _counts(counted: GradeCoverage | DomainCoverage | CoverageCounts) -> list[str]:
    return [str(counted.standards), str(counted.direct), str(counted.viaCrosswalk),
            str(counted.notCovered)]  # fmt: skip


def _order(brief: FrameworkItemBrief) -> tuple[Any, ...]:
    """The order people read codes in (2.OA.A.2 before 2.OA.A.10)."""
    return code_order(brief.statementCode)


def _filter(args: argparse.Namespace) -> PairFilter:
    return PairFilter(
        grades_mask=grade_mask(args.grade or ()),
        statement_type=args.statement_type,
        min_jaccard=args.min_jaccard,
    )


def _with_store(args: argparse.Namespace, run: Callable[[Store], int]) -> int:
    if args.min_jaccard is not None and not 0.0 <= args.min_jaccard <= 1.0:
        say("--min-jaccard takes a number from 0 to 1")
        return EXIT_USAGE
    return on_store(args.backend, run)


def on_store(db: Backend, run: Callable[[Store], int]) -> int:
    """`run` on the loaded data of `db`, its errors as the CLI's one exit-code rule says:
    a bad value 2, anything else refused or unreadable 1."""
    store = db.store()
    try:
        loaded(store)
        return run(store)
    except ValidationError as exc:
        say(exc.message)
        return EXIT_USAGE
    except ApiError as exc:
        say(exc.message)
        return EXIT_FAILED
    except database_errors(StoreUnavailable, OSError) as exc:
        say(f"the data could not be read ({exc})")
        return EXIT_FAILED
    finally:
        store.close()


def _machine_output(
    args: argparse.Namespace,
    rows: Sequence[Any],
    columns: Callable[[Any], list[Any]],
    names: list[str],
) -> bool:
    """Every row as NDJSON (the API's rows) or CSV (flat columns); False for neither."""
    if args.ndjson:
        out = sys.stdout.buffer
        for row in rows:
            out.write(encode(row) + b"\n")
        out.flush()
        return True
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\r\n")
        writer.writerow(names)
        writer.writerows(columns(row) for row in rows)
        return True
    return False


def _brief_names(prefix: str) -> list[str]:
    return [f"{prefix}_{name}" for name in
            ("caseIdentifierUUID", "statementCode", "jurisdiction", "gradeLevel", "description")]  # fmt: skip


def _brief_columns(brief: FrameworkItemBrief) -> list[Any]:
    return [brief.caseIdentifierUUID, brief.statementCode, brief.jurisdiction,
            " ".join(brief.gradeLevel), brief.description]  # fmt: skip


_CROSSWALK_COLUMNS = [*_brief_names("source"), *_brief_names("target"), "jaccard",
                      "sourceLCCount", "targetLCCount", "sharedLCCount", "method"]  # fmt: skip


def _crosswalk_columns(row: FrameworkCrosswalk) -> list[Any]:
    return [*_brief_columns(row.source), *_brief_columns(row.target), row.jaccard,
            row.sourceLCCount, row.targetLCCount, row.sharedLCCount, row.method]  # fmt: skip


_COVERAGE_COLUMNS = [*_brief_names("standard"), "status", "direct", "viaCrosswalk"]


def _coverage_columns(row: CoverageRow) -> list[Any]:
    via = "; ".join(
        f"{v.standard.statementCode} ({v.method}, {v.jaccard}): " + ", ".join(_names(v.aligned))
        for v in row.viaCrosswalk
    )
    return [*_brief_columns(row.standard), row.status, "; ".join(_names(row.direct)), via]


def _names(content: Iterable[AlignedContent]) -> list[str]:
    return [f"{c.type} {c.name or c.identifier}" for c in content]


def _code(brief: FrameworkItemBrief) -> str:
    return str(brief.statementCode or brief.caseIdentifierUUID)


def _covered_by(row: CoverageRow) -> str:
    if row.direct:
        return f"{len(row.direct)} aligned directly"
    return ", ".join(_code(v.standard) for v in row.viaCrosswalk)


def _summary_table(title: str, grades: list[GradeComparison]) -> None:
    table = Table(title=title, caption="none: standards with no counterpart (codes below)")
    table.add_column("grade")
    for name in ("standards", "with counterpart", "Jaccard >= 0.5", "Jaccard 1.0", "none"):
        table.add_column(name, justify="right")
    for g in grades:
        figures = (g.standards, g.withCounterpart, g.withJaccardAtLeastHalf,
                   g.withExactCounterpart, g.withoutCounterpart)  # fmt: skip
        table.add_row(str(g.gradeLevel), *map(str, figures))
    console.print(table)
    for g in grades:  # what "none" counts: a grade's K-12 practices often make up most of it
        alone = g.withoutCounterpartCodes
        if alone:
            shown = ", ".join(alone[:_NAMED]) + (
                f" and {len(alone) - _NAMED} more" if len(alone) > _NAMED else ""
            )
            console.print(f"grade {g.gradeLevel}, no counterpart: {shown}")


_NAMED = 24  # codes named per grade under the crosswalk summary
