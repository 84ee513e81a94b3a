"""The command line: every command and option (its help is the CLI reference)."""

from __future__ import annotations

import argparse
from typing import Any

from edukg import __version__
from edukg.adapters.config import default_of, options
from edukg.cli.alignment import cmd_coverage, cmd_crosswalk
from edukg.cli.data import cmd_demo, cmd_export, cmd_generate, cmd_index, cmd_load, cmd_mcp
from edukg.cli.diff import cmd_diff
from edukg.cli.keys import cmd_keys
from edukg.cli.output import EXIT_RULE
from edukg.cli.releases import cmd_releases
from edukg.cli.serving import cmd_quickstart, cmd_serve
from edukg.cli.text_checks import cmd_align, cmd_check
from edukg.store.base import DATA_VERSION

_INDEX_DESCRIPTION = (
    "Embed record texts for search by meaning (resumable; `load` runs it too, in a process"
    " of its own). While another process is building the index (a load's, in the"
    " background), this one says so, waits for it to end, then finishes what it left, if"
    " anything; its log is beside a SQLite database (DB.index.log), in the temporary folder"
    " for PostgreSQL."
)


def parser() -> argparse.ArgumentParser:
    """The command-line interface (its help is the CLI reference)."""
    p = argparse.ArgumentParser(
        prog="edukg",
        description="Serve the Learning Commons Knowledge Graph export over HTTP.",
        epilog=f"{EXIT_RULE} `edukg COMMAND --help` says more about each command.",
    )
    p.add_argument("--version", action="version", version=f"edukg {__version__}")
    # Also before the command (`edukg --db x.db keys list`); after it, it wins.
    p.add_argument("--db", dest="global_db", default=None, metavar="DB", help=_DB_HELP)
    sub = subcommands(p, dest="command", required=True)

    c = _with_db(
        sub.add_parser(
            "load", help="load an export and/or CASE packages (files, a directory or URLs)"
        )
    )
    c.add_argument(
        "source", nargs="+",
        help="export directory, nodes/relationships files, CASE package files, or their URLs",
    )  # fmt: skip
    c.add_argument(
        "--replace", action="store_true",
        help="allow CASE packages alone onto a database that serves data (they replace it)",
    )  # fmt: skip
    c.add_argument(
        "--data-version", default=None,
        help="the release, e.g. 1.11.0; kept beside the loaded ones (same name: replaced)",
    )  # fmt: skip
    c.add_argument(
        "--max-download", type=int, default=None, metavar="MIB",
        help="stop a download from a URL beyond this many MiB (default 16384; CASE paths:"
        " the package limit)",
    )  # fmt: skip
    c.add_argument(
        "--max-package-mb", type=int, default=None, metavar="MIB",
        help="the largest CASE package to read (default 128); a load needs about 8 times"
        " a package's size in memory",
    )  # fmt: skip
    c.add_argument(
        "--keep", type=int, default=None, metavar="N",
        help="after the load, drop the oldest releases beyond N (default: keep all)",
    )  # fmt: skip
    c.add_argument(
        "--no-index", action="store_true",
        help="skip the semantic index (run `edukg index` later; search ranks by words meanwhile)",
    )  # fmt: skip
    c.add_argument(
        "--wait-index", action="store_true",
        help="build the semantic index before returning (exit 4 if it could not be finished);"
        " by default a process of its own builds it once the data is switched, and servers"
        " pick it up when it is ready",
    )  # fmt: skip
    c.set_defaults(func=cmd_load)

    c = _with_db(
        sub.add_parser(
            "index",
            help="embed record texts for search by meaning (resumable; `load` runs it too)",
            description=_INDEX_DESCRIPTION,
        )
    )
    c.set_defaults(func=cmd_index)

    c = _server_options(
        _with_db(sub.add_parser("serve", help="serve the loaded data over HTTP")), serve=True
    )
    c.set_defaults(func=cmd_serve)

    c = _server_options(
        _with_db(sub.add_parser("quickstart", help="demo data if none, a fresh key, then serve")),
        serve=False,
    )
    c.set_defaults(func=cmd_quickstart)

    _key_and_data_commands(sub)
    _describe(p)
    return p


class _Formatter(argparse.HelpFormatter):
    """Help that shows each option's default where it has one and its help does not."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (default is not None and default is not False and default != argparse.SUPPRESS
                and "default" not in text
                and action.option_strings and not isinstance(default, list)):  # fmt: skip
            text += f" (default: {default})"
        return text


_COMMANDS: dict[argparse.ArgumentParser, list[tuple[str, str, argparse.ArgumentParser]]] = {}


class _Subcommands:
    """A parser's subcommands, noted as they are declared (argparse keeps them only in
    fields of its own that are not public)."""

    def __init__(self, parent: argparse.ArgumentParser, **how: Any) -> None:
        self._parent = parent
        self._action = parent.add_subparsers(**how)

    def add_parser(self, name: str, help: str, **how: Any) -> argparse.ArgumentParser:
        child: argparse.ArgumentParser = self._action.add_parser(name, help=help, **how)
        _COMMANDS.setdefault(self._parent, []).append((name, help, child))
        return child


def subcommands(parent: argparse.ArgumentParser, **how: Any) -> _Subcommands:
    """Declare `parent`'s subcommands (each then listed by `commands_of`)."""
    return _Subcommands(parent, **how)


def commands_of(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand of `parser`, in declared order."""
    return list(_COMMANDS.get(parser, ()))


def _describe(p: argparse.ArgumentParser) -> None:
    """Every command's page opens with what it does (its one-line help, as a sentence)
    and shows defaults."""
    p.formatter_class = _Formatter
    for _, text, child in commands_of(p):
        if not child.description and text:
            child.description = text[0].upper() + text[1:] + "."
        _describe(child)


def _key_and_data_commands(sub: Any) -> None:
    """keys, releases, demo, generate, mcp and export."""
    keys = sub.add_parser("keys", help="create, list and revoke API keys")
    ksub = subcommands(keys, dest="keys_command", required=True)
    c = _with_db(ksub.add_parser("create", help="make a key; prints it on the last line"))
    c.add_argument("name", help="who the key is for (letters, digits, '.', '_', '-')")
    c.add_argument("--rate", type=float, default=None, help="its own requests per second (0: none)")
    c.add_argument("--burst", type=int, default=None, help="its own requests at once")
    c.add_argument("--metrics", action="store_true",
                   help="a scraper's key: it may read /metrics (other keys may not)")  # fmt: skip
    c = _with_db(ksub.add_parser("list", help="names, creation time, last 4 characters"))
    c.add_argument("--json", action="store_true", help="one JSON object per line, for scripts")
    c = _with_db(ksub.add_parser("revoke", help="revoke a key at once"))
    c.add_argument("name", help="the key's name, as `keys list` shows it")
    keys.set_defaults(func=cmd_keys)

    releases = sub.add_parser("releases", help="list, switch and drop the kept data releases")
    rsub = subcommands(releases, dest="releases_command", required=True)
    c = _with_db(rsub.add_parser("list", help="version, content id, load time, size, current"))
    c.add_argument("--json", action="store_true", help="one JSON object per line, for scripts")
    c = _with_db(rsub.add_parser("use", help="make a kept release current (servers follow)"))
    c.add_argument("version", type=_release_name, help="a kept release's data version")
    c = _with_db(rsub.add_parser("drop", help="remove a kept release (never the current one)"))
    c.add_argument("version", type=_release_name, help="a kept release's data version")
    releases.set_defaults(func=cmd_releases)

    c = _with_db(sub.add_parser("diff", help="what changed between two kept releases"))
    c.add_argument("older", help="the older release, e.g. 1.11.0")
    c.add_argument("newer", help="the newer release, e.g. 1.12.0")
    c.add_argument(
        "--ndjson",
        action="store_true",
        help="every change with its before/after values, one JSON object per line",
    )
    c.add_argument("--quiet", action="store_true", help="compute and keep them; print nothing")
    c.set_defaults(func=cmd_diff)

    _alignment_commands(sub)

    c = _with_db(sub.add_parser("demo", help="build the synthetic demo graph into the database"))
    c.set_defaults(func=cmd_demo)

    c = sub.add_parser("generate", help="write a synthetic export at the real one's scale")
    c.add_argument("outdir", help="the directory to write nodes.jsonl and relationships.jsonl to")
    c.add_argument("--scale", default="full", help="'full' (export v1.11.0's counts) or a fraction")
    c.add_argument("--seed", type=int, default=0, help="the same seed writes the same export")
    c.set_defaults(func=cmd_generate)

    c = _with_db(
        sub.add_parser("mcp", help="the MCP tool server over stdio, for desktop assistants")
    )
    c.add_argument("--stdio", action="store_true", help="speak MCP on stdin/stdout")
    c.set_defaults(func=cmd_mcp)

    c = _with_db(sub.add_parser("export", help="write nodes.jsonl and relationships.jsonl"))
    c.add_argument("outdir", help="the directory to write the two files to")
    c.set_defaults(func=cmd_export)


def _alignment_commands(sub: Any) -> None:
    """crosswalk, coverage, align and check."""
    c = _with_db(
        sub.add_parser(
            "crosswalk",
            help="every crosswalk between two frameworks (published, or derived from shared"
            " learning components), with a summary per grade",
        )
    )
    c.add_argument("source", help="the source framework: CASE UUID or JURISDICTION:SUBJECT")
    c.add_argument("target", help="the target framework, named the same way")
    _alignment_options(c)
    c.set_defaults(func=cmd_crosswalk)
    c = _with_db(
        sub.add_parser(
            "coverage",
            help="what a curriculum covers of a framework, directly or through crosswalks",
        )
    )
    c.add_argument("curriculum", help="a loaded curriculum, e.g. im360")
    c.add_argument(
        "framework", help="CASE UUID or JURISDICTION:SUBJECT, e.g. 'New York:Mathematics'"
    )
    _alignment_options(c)
    c.set_defaults(func=cmd_coverage)
    c = _with_db(sub.add_parser("align", help="the standards a text addresses, best first"))
    c.add_argument("text", help="the text, a file holding it, or - for standard input")
    c.add_argument("--jurisdiction", default=None, help="e.g. California (default: any)")
    c.add_argument("--grade", action="append", metavar="GRADE",
                   help="only standards of this grade, e.g. 4 or K (repeatable)")  # fmt: skip
    c.add_argument("--limit", type=int, default=10, help="at most N standards, 1-50 (10)")
    c.add_argument("--json", action="store_true", help="the API's answer, as served")
    c.set_defaults(func=cmd_align)
    c = _with_db(
        sub.add_parser("check", help="a text against one standard, component by component")
    )
    c.add_argument("text", help="the text, a file holding it, or - for standard input")
    c.add_argument("--standard", required=True, metavar="CODE_OR_UUID",
                   help="the standard's code (in --jurisdiction) or CASE UUID")  # fmt: skip
    c.add_argument("--jurisdiction", default=None,
                   help="where the code is (default Multi-State)")  # fmt: skip
    c.add_argument("--json", action="store_true", help="the API's answer, as served")
    c.set_defaults(func=cmd_check)


def _alignment_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--grade", action="append", metavar="GRADE",
        help="only (source) standards of this grade, e.g. 4 or K (repeatable)",
    )  # fmt: skip
    cmd.add_argument(
        "--min-jaccard", type=float, default=None, metavar="X",
        help="only crosswalks with a Jaccard of at least X, 0 to 1 (default 0: any)",
    )  # fmt: skip
    cmd.add_argument(
        "--statement-type", default="Standard",
        choices=("Standard", "Standard Grouping", "Other"),
        help="items of this normalized statement type (default Standard)",
    )  # fmt: skip
    out = cmd.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="every row as CSV, nothing else")
    out.add_argument(
        "--ndjson", action="store_true",
        help="every row as one JSON object per line (the API's rows), nothing else",
    )  # fmt: skip


_DB_HELP = "SQLite file or postgresql:// URL (default: $EDUKG_DB, else ./edukg.db)"


def _release_name(value: str) -> str:
    """A data version as releases are named (a usage error, exit 2, otherwise)."""
    if not DATA_VERSION.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a data version (letters, digits, '.', '_' and '-', at most 64)"
        )
    return value


def _with_db(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
    cmd.add_argument("--db", default=None, help=_DB_HELP)
    return cmd


def _server_options(cmd: argparse.ArgumentParser, serve: bool) -> argparse.ArgumentParser:
    """The options of `serve` (and, but for --workers, `quickstart`): one per setting, as
    adapters.config declares it."""
    for name, option in options():
        if option.flag is None or (option.serve_only and not serve):
            continue
        shown = option.shown_default or default_of(name)
        help = f"{option.help} (default: {shown}) [env {option.env}]"
        if option.kind == "switch":
            cmd.add_argument(option.flag, dest=name, action="store_true", default=None,
                             help=f"{option.help} [env {option.env}=1]")  # fmt: skip
        elif option.kind == "off":
            cmd.add_argument(option.flag, dest=name, action="store_false", default=None,
                             help=f"{option.help} [env {option.env}=0]")  # fmt: skip
        elif option.kind == "many":
            cmd.add_argument(option.flag, dest=name, action="append", default=None,
                             metavar=option.metavar, help=help)  # fmt: skip
        else:
            cmd.add_argument(option.flag, dest=name, type=option.read, default=None,
                             metavar=option.metavar, help=help)  # fmt: skip
    return cmd
