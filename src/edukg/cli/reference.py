"""The generated reference: docs/openapi.json, the operation table of docs/api.md and its
reference of the extensions' rows, the command table of README.md and docs/cli.md, all
made from the code's declarations.

`make docs` writes them; `make lint` runs this with `--check`, which fails when a
checked-in copy differs from what the code declares now.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from edukg.adapters.config import DEFAULT_BASE_PATH
from edukg.adapters.openapi import SERVICE_PATHS, build_openapi
from edukg.adapters.params import Param
from edukg.adapters.rest import OPERATIONS, Operation
from edukg.adapters.schemas_typed import enum_schemas, row_schema
from edukg.cli.output import EXIT_RULE
from edukg.model import alignment, framework_rows

BEGIN = "<!-- generated from the code by `make docs`: edit the declarations, not this -->"
END = "<!-- end of generated reference -->"
ROWS_BEGIN = "<!-- rows generated from model/alignment.py and model/framework_rows.py -->"
ROWS_END = "<!-- end of generated rows -->"
_WIDTH = "96"  # help is wrapped to this, whatever the terminal


def openapi_json() -> str:
    """The OpenAPI document a server with the default base path serves."""
    document = build_openapi(DEFAULT_BASE_PATH, OPERATIONS, SERVICE_PATHS)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def _param_text(p: Param) -> str:
    kind = p.enum if p.enum else p.kind
    words = [f"`{p.name}`", f"{kind}{'[]' if p.repeat else ''}"]
    if p.location == "path":
        words.append("in path")
    elif p.required:
        words.append("required")
    if p.minimum is not None and p.maximum is not None:
        words.append(f"{p.minimum:g}..{p.maximum:g}")
    if p.max_length is not None:
        words.append(f"≤{p.max_length} chars")
    if p.default not in (None, False):
        words.append(f"default {p.default}")
    return " ".join(words)


def _operation_row(op: Operation[Any]) -> str:
    params = "; ".join(_param_text(p) for p in op.declared) or "none"
    return f"| {op.operation_id} | `{op.path}` | {params} | {op.summary} |"


def operations_table() -> str:
    """docs/api.md's table: every operation with its typed parameters."""
    rows = [
        "| operation | path | parameters | summary |",
        "|---|---|---|---|",
        *(_operation_row(op) for op in OPERATIONS),
    ]
    return "\n".join(rows) + "\n"


def _commands(
    parser: argparse.ArgumentParser, prefix: str = "edukg"
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    from edukg.cli.parser import commands_of  # noqa: PLC0415 (after COLUMNS, as the parser)

    for name, text, sub in commands_of(parser):
        yield f"{prefix} {name}", text, sub
        yield from _commands(sub, f"{prefix} {name}")


def commands_table(parser: argparse.ArgumentParser) -> str:
    """README's table of commands, one row per command and subcommand."""
    rows = ["| command | what it does |", "|---|---|"]
    rows += [f"| `{name}` | {text} |" for name, text, _ in _commands(parser)]
    return "\n".join(rows) + f"\n\n{EXIT_RULE}\n"


def cli_reference(parser: argparse.ArgumentParser) -> str:
    """docs/cli.md: every command's full help."""
    parts = [
        "# Command-line reference\n",
        "Every command's `--help`, generated from the parser by `make docs`. Every command "
        "that reads or writes data takes `--db PATH` or `--db postgresql://...` (before or "
        "after the command's name); without it, `$EDUKG_DB`, else `./edukg.db`.\n",
    ]
    for name, _, sub in _commands(parser):
        parts.append(f"## `{name}`\n\n```text\n{sub.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def shapes_reference() -> str:
    """Each row type of the extensions (model.alignment, model.framework_rows) as a table
    of its fields, their types and what they mean, from the same declarations as the
    OpenAPI schemas."""
    out = []
    for shape in (*alignment.SHAPES, *framework_rows.SHAPES):
        schema = row_schema(shape)
        own = schema["allOf"][1] if "allOf" in schema else schema
        extends = getattr(shape, "EXTENDS", None)
        about = " ".join((inspect.getdoc(shape) or "").split())
        head = f"**{shape.__name__}**: {about}"
        if extends:
            head += f" The `{extends}` record, then:"
        out += [head, "", "| field | type | |", "|---|---|---|"]
        for name, field in own["properties"].items():
            optional = name not in own["required"]
            out.append(
                f"| `{name}` | {_type_text(field, optional)} | {field.get('description', '')} |"
            )
        out.append("")
    return "\n".join(out)


def _type_text(schema: dict[str, Any], optional: bool = False) -> str:
    if "allOf" in schema:
        text = _type_text(schema["allOf"][0])
    elif "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        enum = _ENUMS.get(name)
        text = _type_text(enum) if enum is not None else name
    elif schema.get("type") == "array":
        text = f"list of {_type_text(schema['items'])}"
    elif "enum" in schema:
        text = " \\| ".join(f"`{v}`" for v in schema["enum"])
    else:
        text = str(schema.get("type", "object"))
    if schema.get("nullable"):
        text += " or null"
    return text + (" (left out when empty)" if optional else "")


_ENUMS = enum_schemas(alignment.ENUM_TYPES)


def _spliced(text: str, generated: str, begin: str = BEGIN, end: str = END) -> str:
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"the markers {begin!r} and {end!r} are missing")
    return f"{head}{begin}\n{generated}{end}{tail}"


def _targets(root: Path) -> dict[Path, Callable[[str], str]]:
    os.environ["COLUMNS"] = _WIDTH
    from edukg.cli.parser import parser  # noqa: PLC0415 (after COLUMNS: argparse reads it)

    p = parser()
    p.prog = "edukg"
    return {
        root / "docs" / "openapi.json": lambda _old: openapi_json(),
        root / "docs" / "api.md": lambda old: _spliced(
            _spliced(old, operations_table()), shapes_reference(), ROWS_BEGIN, ROWS_END
        ),
        root / "README.md": lambda old: _spliced(old, commands_table(p)),
        root / "docs" / "cli.md": lambda _old: cli_reference(p),
    }


def main(argv: list[str] | None = None) -> int:
    """Write the generated reference, or with --check say which copies are stale."""
    args = argparse.ArgumentParser(prog="python -m edukg.cli.reference")
    args.add_argument("--check", action="store_true", help="fail if a copy is stale")
    args.add_argument("--root", type=Path, default=Path.cwd(), help="the checkout")
    opts = args.parse_args(argv)
    stale = []
    for path, make in _targets(opts.root).items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = make(old)
        if new == old:
            continue
        if opts.check:
            stale.append(str(path.relative_to(opts.root)))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {path.relative_to(opts.root)}")
    if stale:
        print(f"stale generated reference: {', '.join(stale)}; run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
