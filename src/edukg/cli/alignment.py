"""`edukg crosswalk FROM TO` and `edukg coverage CURRICULUM FRAMEWORK`: the alignment
operations of the API, for spreadsheets and scripts (the rows are the API's rows)."""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Iterable
from typing import Any

import orjson
from rich.table import Table

from edukg.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, console, say
from edukg.model.errors import ApiError, ValidationError
from edukg.model.vocabulary import code_order, grade_mask
from edukg.services import comparison, coverage
from edukg.services.comparison import PairFilter
from edukg.services.graph import loaded
from edukg.store import database_errors, open_store
from edukg.store.base import Store, StoreUnavailable


def cmd_crosswalk(args: argparse.Namespace) -> int:
    def run(store: Store) -> int:
        source = comparison.resolve_framework(store, args.source)
        target = comparison.resolve_framework(store, args.target)
        compared = comparison.compare(store, source, target, _filter(args))
        rows = _by_code([orjson.loads(row) for row in compared.rows], "source", "target")
        if _machine_output(args, rows, _crosswalk_columns, _CROSSWALK_TEMPLATE):
            return EXIT_OK
        table = Table(title=f"{len(rows):,} crosswalks")
        for column in ("source", "target", "jaccard", "shared", "method"):
            table.add_column(column)
        for row in rows:
            table.add_row(
                _code(row["source"]), _code(row["target"]), f"{row['jaccard'] or 0:.2f}",
                str(row["sharedLCCount"]), row["method"],
            )  # fmt: skip
        console.print(table)
        # The summary last: hundreds of rows would scroll it off a terminal.
        _summary_table(f"{args.source} -> {args.target}", compared.summary)
        return EXIT_OK

    return _with_store(args, run)


def cmd_coverage(args: argparse.Namespace) -> int:
    def run(store: Store) -> int:
        framework = comparison.resolve_framework(store, args.framework)
        result = coverage.coverage(store, args.curriculum, framework, _filter(args))
        rows = _by_code([orjson.loads(row) for _, row in result.rows], "standard")
        if _machine_output(args, rows, _coverage_columns, _COVERAGE_TEMPLATE):
            if result.summary.get("note"):
                say(result.summary["note"])  # on stderr: the rows stay machine-readable
            return EXIT_OK
        summary = result.summary
        listing = Table(title="Standards")
        for column in ("standard", "domain", "status", "covered by"):
            listing.add_column(column)
        for row in rows:
            domain = row["domain"] or {}
            listing.add_row(_code(row["standard"]), str(domain.get("code") or ""),
                            row["status"], _covered_by(row))  # fmt: skip
        console.print(listing)
        # The summaries last: hundreds of rows would scroll them off a terminal.
        for title, key, label in (("by domain", "byDomain", "domain"),
                                  ("by grade", "byGrade", "grade")):  # fmt: skip
            table = Table(title=f"{args.curriculum} in {args.framework}, {title}")
            for column in (label, "standards", "direct", "via crosswalk", "not covered"):
                table.add_column(column, justify="left" if column == label else "right")
            for part in summary[key]:
                table.add_row(_part_name(part), *(str(part[k]) for k in _COUNTS))
            table.add_row("all", *(str(summary["total"][k]) for k in _COUNTS))
            console.print(table)
        if summary.get("note"):
            say(summary["note"])
        return EXIT_OK

    return _with_store(args, run)


def _part_name(part: dict[str, Any]) -> str:
    """A summary row's name: its grade, or its domain's code (else its description)."""
    if "gradeLevel" in part:
        return str(part["gradeLevel"])
    domain = part["domain"] or {}
    return str(domain.get("code") or domain.get("description") or "(none)")


def _by_code(rows: list[dict[str, Any]], *sides: str) -> list[dict[str, Any]]:
    """Rows in the order people read codes (2.OA.A.2 before 2.OA.A.10)."""
    return sorted(
        rows, key=lambda r: tuple(code_order(r[side].get("statementCode")) for side in sides)
    )


_COUNTS = ("standards", "direct", "viaCrosswalk", "notCovered")


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
    store = open_store(args.db)
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
    rows: list[dict[str, Any]],
    columns: Callable[[dict[str, Any]], dict[str, Any]],
    template: dict[str, Any],
) -> bool:
    """Every row as NDJSON (the API's rows) or CSV (flat columns); False for neither."""
    if args.ndjson:
        out = sys.stdout.buffer
        for row in rows:
            out.write(orjson.dumps(row) + b"\n")
        out.flush()
        return True
    if args.csv:
        flat = [columns(row) for row in rows]
        writer = csv.DictWriter(sys.stdout, fieldnames=list(columns(template)))
        writer.writeheader()
        writer.writerows(flat)
        return True
    return False


def _brief_columns(prefix: str, brief: dict[str, Any]) -> dict[str, Any]:
    return {
        f"{prefix}_caseIdentifierUUID": brief.get("caseIdentifierUUID"),
        f"{prefix}_statementCode": brief.get("statementCode"),
        f"{prefix}_jurisdiction": brief.get("jurisdiction"),
        f"{prefix}_gradeLevel": " ".join(brief.get("gradeLevel") or ()),
        f"{prefix}_description": brief.get("description"),
    }


def _crosswalk_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **_brief_columns("source", row["source"]),
        **_brief_columns("target", row["target"]),
        **{k: row[k] for k in ("jaccard", "sourceLCCount", "targetLCCount", "sharedLCCount")},
        "method": row["method"],
    }


def _coverage_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **_brief_columns("standard", row["standard"]),
        "status": row["status"],
        "direct": "; ".join(_names(row["direct"])),
        "viaCrosswalk": "; ".join(
            f"{v['standard']['statementCode']} ({v['method']}, {v['jaccard']}): "
            + ", ".join(_names(v["aligned"]))
            for v in row["viaCrosswalk"]
        ),
    }


# Rows with no values: their columns are the CSV header even when there are no rows.
_BRIEF: dict[str, Any] = {"gradeLevel": []}
_CROSSWALK_TEMPLATE: dict[str, Any] = {"source": _BRIEF, "target": _BRIEF, "jaccard": None, "sourceLCCount": None,
                       "targetLCCount": None, "sharedLCCount": None, "method": None}  # fmt: skip
_COVERAGE_TEMPLATE: dict[str, Any] = {
    "standard": _BRIEF,
    "status": None,
    "direct": [],
    "viaCrosswalk": [],
}


def _names(content: Iterable[dict[str, Any]]) -> list[str]:
    return [f"{c['type']} {c.get('name') or c['identifier']}" for c in content]


def _code(brief: dict[str, Any]) -> str:
    return str(brief.get("statementCode") or brief.get("caseIdentifierUUID"))


def _covered_by(row: dict[str, Any]) -> str:
    if row["direct"]:
        return f"{len(row['direct'])} aligned directly"
    return ", ".join(_code(v["standard"]) for v in row["viaCrosswalk"])


def _summary_table(title: str, grades: list[dict[str, Any]]) -> None:
    table = Table(title=title, caption="none: standards with no counterpart (codes below)")
    names = ("standards", "withCounterpart", "withJaccardAtLeastHalf", "withExactCounterpart",
             "withoutCounterpart")  # fmt: skip
    table.add_column("grade")
    for name in ("standards", "with counterpart", "Jaccard >= 0.5", "Jaccard 1.0", "none"):
        table.add_column(name, justify="right")
    for g in grades:
        table.add_row(str(g["gradeLevel"]), *(str(g[k]) for k in names))
    console.print(table)
    for g in grades:  # what "none" counts: a grade's K-12 practices often make up most of it
        alone = g.get("withoutCounterpartCodes") or []
        if alone:
            shown = ", ".join(alone[:_NAMED]) + (
                f" and {len(alone) - _NAMED} more" if len(alone) > _NAMED else ""
            )
            console.print(f"grade {g['gradeLevel']}, no counterpart: {shown}")


_NAMED = 24  # codes named per grade under the crosswalk summary
