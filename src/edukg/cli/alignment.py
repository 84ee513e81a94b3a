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
from edukg.model.vocabulary import grade_mask
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
        rows = [orjson.loads(row) for row in compared.rows]
        if _machine_output(args, rows, _crosswalk_columns, _CROSSWALK_TEMPLATE):
            return EXIT_OK
        _summary_table(f"{args.source} -> {args.target}", compared.summary)
        table = Table(title=f"{len(rows):,} crosswalks")
        for column in ("source", "target", "jaccard", "shared", "method"):
            table.add_column(column)
        for row in rows:
            table.add_row(
                _code(row["source"]), _code(row["target"]), f"{row['jaccard'] or 0:.2f}",
                str(row["sharedLCCount"]), row["method"],
            )  # fmt: skip
        console.print(table)
        return EXIT_OK

    return _with_store(args, run)


def cmd_coverage(args: argparse.Namespace) -> int:
    def run(store: Store) -> int:
        framework = comparison.resolve_framework(store, args.framework)
        result = coverage.coverage(store, args.curriculum, framework, _filter(args))
        rows = [orjson.loads(row) for _, row in result.rows]
        if _machine_output(args, rows, _coverage_columns, _COVERAGE_TEMPLATE):
            return EXIT_OK
        summary = result.summary
        table = Table(title=f"{args.curriculum} in {args.framework}")
        for column in ("grade", "standards", "direct", "via crosswalk", "not covered"):
            table.add_column(column, justify="left" if column == "grade" else "right")
        for g in summary["byGrade"]:
            table.add_row(str(g["gradeLevel"]), *(str(g[k]) for k in _COUNTS))
        table.add_row("all", *(str(summary["total"][k]) for k in _COUNTS))
        console.print(table)
        listing = Table(title="Standards")
        for column in ("standard", "status", "covered by"):
            listing.add_column(column)
        for row in sorted(rows, key=lambda r: str(r["standard"]["statementCode"])):
            listing.add_row(_code(row["standard"]), row["status"], _covered_by(row))
        console.print(listing)
        return EXIT_OK

    return _with_store(args, run)


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
    table = Table(title=title)
    names = ("standards", "withCounterpart", "withJaccardAtLeastHalf", "withExactCounterpart",
             "withoutCounterpart")  # fmt: skip
    table.add_column("grade")
    for name in ("standards", "with counterpart", "Jaccard >= 0.5", "Jaccard 1.0", "none"):
        table.add_column(name, justify="right")
    for g in grades:
        table.add_row(str(g["gradeLevel"]), *(str(g[k]) for k in names))
    console.print(table)
