"""`edukg keys`: create, list and revoke API keys."""

from __future__ import annotations

import argparse

import orjson
from rich.console import Console
from rich.table import Table

from edukg.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    console,
    say,
)
from edukg.store import KeyInfo, KeyStore, database_errors
from edukg.store.base import StoreUnavailable
from edukg.store.keys import KeyNameError


def cmd_keys(args: argparse.Namespace) -> int:
    creating = args.keys_command == "create"
    refused = args.backend.keys_missing(creating)
    if refused is not None:
        say(refused)
        return EXIT_FAILED
    keys = args.backend.keys(create=creating)
    try:
        return _keys_command(keys, args)
    except database_errors(StoreUnavailable, OSError) as exc:
        name = getattr(args, "name", "")
        what = {"create": "no key was created", "revoke": f"{name!r} was NOT revoked"}
        say(
            f"the key store could not be {'read' if args.keys_command == 'list' else 'written'}"
            f" ({exc}); {what.get(args.keys_command, 'nothing was changed')}"
        )
        return EXIT_FAILED
    finally:
        keys.close()


def _keys_command(keys: KeyStore, args: argparse.Namespace) -> int:
    if args.keys_command == "create":
        try:
            key = keys.create(args.name, args.rate, args.burst, args.metrics)
        except KeyNameError as exc:
            say(f"cannot create key: {exc}")
            return EXIT_FAILED
        say(f"Created key {args.name!r}. It is shown once; store it now.")
        print(key)
    elif args.keys_command == "list":
        _list_keys(keys.list(), args.json)
    elif not keys.revoke(args.name):
        say(f"no live key named {args.name!r}")
        return EXIT_FAILED
    else:
        console.print(f"revoked {args.name!r}; it is refused from now on")
    return EXIT_OK


def _list_keys(infos: list[KeyInfo], as_json: bool) -> None:
    """Whole names always (`keys revoke` needs them); JSON lines for scripts."""
    if as_json:
        for info in infos:
            print(
                orjson.dumps(
                    {
                        "name": info.name,
                        "createdAt": info.created_at,
                        "last4": info.last4,
                        "revokedAt": info.revoked_at,
                        "rate": info.rate,
                        "burst": info.burst,
                        "metrics": info.metrics,
                    }
                ).decode()
            )
        return
    table = Table()
    table.add_column("name", no_wrap=True, overflow="ignore")
    for column in ("created", "key ends with", "rate limit", "may read", "revoked"):
        table.add_column(column, no_wrap=True)
    for info in infos:
        table.add_row(info.name, info.created_at, f"…{info.last4}", _limit(info),
                      "data, /metrics" if info.metrics else "data", info.revoked_at or "")  # fmt: skip
    Console(highlight=False, width=max(200, console.width)).print(table)


def _limit(info: KeyInfo) -> str:
    """The key's own rate limit in words, or that it has the server's default."""
    if info.rate is None:
        return "server default"
    if info.rate == 0:
        return "unlimited"
    burst = f", burst {info.burst}" if info.burst is not None else ""
    return f"{info.rate:g}/s{burst}"
