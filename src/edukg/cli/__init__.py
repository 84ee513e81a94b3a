"""The `edukg` command: a thin layer over the loader, the stores and the server.

Exit codes, for scripts: cli.output.EXIT_RULE (the one statement of them).
"""

from __future__ import annotations

import sys

from edukg.adapters.config import resolve_db
from edukg.cli.data import build_demo
from edukg.cli.output import EXIT_FAILED, EXIT_USAGE, say
from edukg.cli.parser import parser
from edukg.store import BackendMissing, backend_of

__all__ = ["build_demo", "main", "parser"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `edukg` console script."""
    commands = parser()
    if not (argv if argv is not None else sys.argv[1:]):  # bare `edukg`: what it can do
        commands.print_help(sys.stderr)
        return EXIT_USAGE
    args = commands.parse_args(argv)
    args.db = resolve_db(getattr(args, "db", None) or args.global_db)
    args.backend = backend = backend_of(args.db)  # chosen once, for every command
    unloaded = backend.nothing_loaded() if args.command in _READS_DATA else None
    if unloaded is not None:
        say(unloaded)
        return EXIT_FAILED
    try:
        backend.require()
    except BackendMissing as exc:
        say(str(exc))
        return EXIT_USAGE
    return int(args.func(args))


# Commands that read loaded data: on a SQLite file that is not there, they say so rather
# than start on an empty database.
_READS_DATA = frozenset({"index", "export", "mcp", "releases", "diff", "crosswalk", "coverage",
                         "align", "check"})  # fmt: skip
