"""`edukg align TEXT` and `edukg check TEXT --standard CODE`: a text aligned to standards,
and a text checked against one standard, from a terminal or a script.

The text is the argument itself, a file of that name, or `-` for standard input. The
options are read by the REST operations' own rules (POST /alignments and POST
/alignments/check), so a value the API refuses is refused here in the same words, and
`--json` prints the API's answer as it would be served.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

import orjson
from rich.table import Table

from edukg.adapters.params import declared, instance, parse_body
from edukg.adapters.rest.text_alignment import AlignBody, CheckBody, check_choice
from edukg.cli.alignment import on_store
from edukg.cli.notation import plain
from edukg.cli.output import EXIT_OK, EXIT_USAGE, cell, console, say
from edukg.model.alignment import StandardCheck, encode
from edukg.model.errors import ValidationError
from edukg.model.vocabulary import grade_mask
from edukg.services.alignment import AlignQuery, CheckQuery, align, check

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_QUOTED = 70  # characters of a passage shown in a table


# The endings of the files a text to align comes in; an argument ending so names a file.
_DOCUMENTS = frozenset(
    ["txt", "text", "md", "markdown", "rst", "html", "htm", "json", "jsonl", "csv", "tsv",
     "xml", "yaml", "yml", "tex", "rtf", "pdf", "doc", "docx", "odt", "pages"]
)  # fmt: skip


def text_of(argument: str) -> str:
    """The text an argument names: standard input for `-`, a file's content where a file
    of that name exists, else the argument itself; an argument that reads as a path (one
    word with a path separator, or a document's file ending: missing.txt) but names no
    file is an error, never aligned as text."""
    if argument == "-":
        return sys.stdin.read()
    if len(argument) >= 4096 or "\n" in argument:
        return argument
    path = Path(argument)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    if _reads_as_path(argument):
        raise ValidationError(
            f"no file {argument} (give the text itself, a file that exists, or - for"
            " standard input)"
        )
    return argument


def _reads_as_path(argument: str) -> bool:
    """lessons/unit-1, ./draft.md, missing.txt; not a sentence, 3/4 or 6.RP.A.3.c."""
    last = argument.rsplit(maxsplit=1)[-1] if argument.strip() else ""
    stem, _, ending = last.rpartition(".")
    if stem and ending.lower() in _DOCUMENTS:  # not "... saved as a .csv"
        return True
    separated = "/" in argument or os.sep in argument
    word = not any(c.isspace() for c in argument)
    return word and separated and any(c.isalpha() for c in argument)


def cmd_align(args: argparse.Namespace) -> int:
    def run(text: str, store: Any) -> int:
        given = {"text": text, "jurisdiction": args.jurisdiction, "gradeLevel": args.grade,
                 "limit": args.limit}  # fmt: skip
        body = _body(AlignBody, given)
        found = align(store, AlignQuery(text=body.text, jurisdiction=body.jurisdiction,
                                        grades_mask=grade_mask(body.gradeLevel),
                                        limit=body.limit))  # fmt: skip
        if args.json:
            _write(found.encoded())
            return EXIT_OK
        if not found.data:
            say("No standard matched this text closely enough.")
            return EXIT_OK
        passages = f"{found.passages} passage{'' if found.passages == 1 else 's'}"
        table = Table(title=f"{len(found.data)} standards ({found.ranking}, {passages})")
        for column in ("#", "standard", "score", "confidence", "statement", "evidence"):
            table.add_column(column, justify="right" if column in ("#", "score") else "left")
        for n, row in enumerate(found.data, 1):
            brief, extension = row.brief, row.extension
            shown = extension.evidence.passages[:1]
            code = brief.statementCode or brief.caseIdentifierUUID
            if not body.jurisdiction:  # codes repeat across jurisdictions: say whose
                code = f"{code} ({brief.jurisdiction})"
            table.add_row(str(n), cell(code), f"{extension.score:.2f}", extension.confidence,
                          cell(_short(plain(brief.description or ""))),
                          cell(_short(shown[0].text) if shown else ""))  # fmt: skip
        console.print(table)
        return EXIT_OK

    return _run(args, run)


def cmd_check(args: argparse.Namespace) -> int:
    def run(text: str, store: Any) -> int:
        by_uuid = bool(_UUID.match(args.standard))
        given = {"text": text, "jurisdiction": args.jurisdiction,
                 "caseIdentifierUUID": args.standard.lower() if by_uuid else None,
                 "statementCode": None if by_uuid else args.standard}  # fmt: skip
        body = _body(CheckBody, given)
        check_choice(body)
        found = check(store, CheckQuery(body.text, body.caseIdentifierUUID, body.statementCode,
                                        body.jurisdiction))  # fmt: skip
        if args.json:
            _write(encode(found))
        else:
            _check_table(found)
        return EXIT_OK

    return _run(args, run)


def _check_table(found: StandardCheck) -> None:
    brief = found.standard
    verdict = "aligned" if found.aligned else "not aligned"
    console.print(f"{brief.statementCode or brief.caseIdentifierUUID} ({brief.jurisdiction}):"
                  f" {verdict}, score {found.score:.2f} ({found.confidence}),"
                  f" {found.alignedCount} of {found.totalCount} learning components addressed",
                  markup=False)  # fmt: skip
    if brief.description:  # what the text was checked against, its formulas as text
        console.print(plain(brief.description), markup=False)
    if found.learningComponents:
        table = Table(title=f"Learning components ({found.componentsFrom})")
        for column in ("addressed", "score", "component", "passage"):
            table.add_column(column, justify="right" if column == "score" else "left")
        for c in found.learningComponents:
            table.add_row("yes" if c.addressed else "no", f"{c.score:.2f}",
                          cell(_short(plain(c.description) if c.description else c.identifier)),
                          cell(_short(c.passages[0].text) if c.passages else ""))  # fmt: skip
        console.print(table)
    if found.rank is not None:
        better = ", ".join(found.rank.better[:5])
        console.print(f"rank {found.rank.position} of {found.rank.of} for this text"
                      + (f"; better: {better}" if better else ""))  # fmt: skip
    if found.note:
        say(found.note)


def _body(params: Any, given: dict[str, Any]) -> Any:
    """The options as the REST operation reads its body (the same rules and words)."""
    kept = {k: v for k, v in given.items() if v is not None}
    return instance(params, parse_body(declared(params), orjson.dumps(kept)))


def _run(args: argparse.Namespace, run: Any) -> int:
    try:
        text = text_of(args.text)
    except ValidationError as exc:
        say(exc.message)
        return EXIT_USAGE
    except (OSError, UnicodeDecodeError) as exc:
        say(f"the text could not be read ({exc})")
        return EXIT_USAGE
    return on_store(args.backend, lambda store: int(run(text, store)))


def _write(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTED else flat[: _QUOTED - 1] + "…"
