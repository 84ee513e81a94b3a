"""One configuration: every setting declared once (adapters.config), and the CLI's flags,
its help, docs/cli.md, `serve`'s hand-over to its workers and the workers' reading all
agree with that declaration."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from typing import Any

import pytest

from edukg.adapters.config import Settings, default_of, options, to_env
from edukg.cli.parser import parser
from edukg.cli.serving import settings_of
from edukg.store import backend_of
from harness.processes import EDUKG
from tests.support import ROOT

# A value unlike each default, as a flag's argument would give it.
_OTHER = {str: "x", int: 7, float: 0.25, bool: True}


def _other(name: str) -> Any:
    default = default_of(name)
    if name == "base_path":
        return "/other/v9"
    if name in ("read_db", "redis"):
        return "postgresql://elsewhere/db" if name == "read_db" else "redis://elsewhere:6379/1"
    if name == "public_url":
        return "https://edukg.example.org"
    if name == "allowed_origins":
        return ("https://a.example", "https://b.example")
    if name == "access_log":
        return False
    return _OTHER[type(default)]


def test_every_setting_has_a_flag_in_help_and_docs() -> None:
    shown = subprocess.run([*EDUKG, "serve", "--help"],
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    reference = (ROOT / "docs" / "cli.md").read_text()
    for name, option in options():
        if option.flag is None:
            continue  # --db: every command's own
        assert option.flag in shown and option.env in shown, name
        assert option.flag in reference, f"{option.flag} missing from docs/cli.md"


def test_flags_reach_the_workers_as_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, option in options():
        monkeypatch.delenv(option.env, raising=False)
    argv = ["serve", "--db", "/data/edukg.db"]
    wanted: dict[str, Any] = {"db": "/data/edukg.db"}
    for name, option in options():
        if option.flag is None:
            continue
        value = _other(name)
        wanted[name] = value
        if option.kind in ("switch", "off"):
            argv.append(option.flag)
        elif option.kind == "many":
            for each in value:
                argv += [option.flag, each]
        else:
            argv += [option.flag, str(value)]
    args = parser().parse_args(argv)
    args.db = "/data/edukg.db"
    args.backend = backend_of(args.db)  # as `edukg` itself chooses it, once
    given = settings_of(args)
    assert dataclasses.asdict(given) == {**dataclasses.asdict(Settings()), **wanted}
    # `serve` hands every setting over by its variable; a worker reads the same settings.
    for name, option in options():
        monkeypatch.setenv(option.env, to_env(option, getattr(given, name)))
    assert Settings.from_env() == given


def test_without_flags_or_variables_the_defaults_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, option in options():
        monkeypatch.delenv(option.env, raising=False)
    read = Settings.from_env()
    assert read == Settings()
    assert read.public_url == "http://127.0.0.1:8000"
    assert os.environ.get("EDUKG_PORT") is None


def test_defaults_reach_the_workers_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, option in options():
        monkeypatch.delenv(option.env, raising=False)
    args = parser().parse_args(["serve"])
    args.db = "/data/edukg.db"
    args.backend = backend_of(args.db)  # as `edukg` itself chooses it, once
    given = settings_of(args)
    assert given.redis is None and given.read_db is None
    for name, option in options():
        monkeypatch.setenv(option.env, to_env(option, getattr(given, name)))
    assert Settings.from_env() == given
