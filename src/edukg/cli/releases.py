"""`edukg releases`: list the kept releases, make one current, drop one."""

from __future__ import annotations

import argparse

import orjson
from rich.table import Table

from edukg.cli.output import EXIT_FAILED, EXIT_OK, console, say, size_text
from edukg.store import Release, ReleaseError, database_errors
from edukg.store.base import StoreUnavailable


def cmd_releases(args: argparse.Namespace) -> int:
    releases = args.backend.releases()
    try:
        if args.releases_command == "list":
            _print(releases.list(sizes=True), args.json)
        elif args.releases_command == "use":
            release = releases.use(args.version)
            say(f"Release {release.data_version} is now current (content id "
                f"{release.content_id[:16]}); servers switch on their next request.")  # fmt: skip
        else:
            release = releases.drop(args.version)
            say(f"Dropped release {release.data_version}; {size_text(release.size_bytes)} freed.")
    except ReleaseError as exc:
        say(f"{exc}; nothing was changed")
        return EXIT_FAILED
    except database_errors(StoreUnavailable, OSError) as exc:
        say(f"the releases could not be read or changed ({exc}); nothing was changed")
        return EXIT_FAILED
    finally:
        releases.close()
    return EXIT_OK


def _print(found: list[Release], as_json: bool) -> None:
    if as_json:
        for r in found:
            print(orjson.dumps({"dataVersion": r.data_version, "contentId": r.content_id,
                                "loadedAt": r.loaded_at, "counts": r.counts,
                                "current": r.current, "sizeBytes": r.size_bytes}).decode())  # fmt: skip
        return
    if not found:
        say("no release is loaded: run `edukg load EXPORT --data-version X`")
        return
    table = Table(title="Releases")
    for column in ("version", "content id", "loaded at", "records", "size", "current"):
        table.add_column(column, justify="right" if column in ("records", "size") else "left")
    for r in found:
        table.add_row(r.data_version, r.content_id[:16], r.loaded_at,
                      f"{sum(r.counts.values()):,}", size_text(r.size_bytes),
                      "yes" if r.current else "")  # fmt: skip
    console.print(table)
    count = f"{len(found)} release{'' if len(found) == 1 else 's'}"
    console.print(f"{count}, {size_text(sum(r.size_bytes for r in found))} in all")
