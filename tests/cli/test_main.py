"""The command line's own logic, in process: how `main` picks the backend once and
refuses bad arguments with the exit-code rule (cli.output.EXIT_RULE), before anything is
read. Real processes are in tests/test_cli.py; these are its unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from edukg.cli import build_demo, main
from edukg.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from edukg.ingest.limits import MAX_DOWNLOAD, MAX_PACKAGE_MB, LoadLimits
from edukg.store import open_store
from tests.support import SAMPLE


def test_bare_edukg_shows_what_it_can_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_USAGE
    assert "load" in capsys.readouterr().err


def test_a_command_that_reads_data_names_the_missing_file_or_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(tmp_path / "out"), "--db", str(tmp_path / "none.db")]) == EXIT_FAILED
    assert "nothing is loaded at" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "out"), "--db", str(tmp_path)]) == EXIT_FAILED
    assert "a directory, not a database file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--data-version", "not a version"], "is not a version"),
        (["--keep", "0"], "keep at least the release being loaded"),
    ],
)
def test_bad_load_arguments_are_a_usage_error_and_change_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], said: str
) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    before = open_store(db).info()
    code = main(["load", str(SAMPLE), "--db", db, "--no-index", *flags])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and said in err and "nothing was loaded" in err
    assert open_store(db).info() == before


def test_key_commands_say_which_file_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "edukg.db")
    assert main(["keys", "list", "--db", db]) == EXIT_FAILED
    assert "no key file for" in capsys.readouterr().err
    assert main(["keys", "create", "ci", "--db", db]) == EXIT_FAILED
    assert "no key file beside it" in capsys.readouterr().err
    build_demo(db)
    assert main(["keys", "create", "ci", "--db", db]) == EXIT_OK
    assert main(["keys", "list", "--db", db]) == EXIT_OK


def test_load_limits_are_given_in_mib_and_never_below_one() -> None:
    assert LoadLimits.of(None, None) == LoadLimits(MAX_DOWNLOAD, MAX_PACKAGE_MB << 20)
    assert LoadLimits.of(0, 3) == LoadLimits(1 << 20, 3 << 20)


def test_a_size_flag_wins_over_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from edukg.cli.data import _megabytes

    monkeypatch.setenv("EDUKG_MAX_DOWNLOAD_MB", "7")
    assert _megabytes(0, "EDUKG_MAX_DOWNLOAD_MB") == 0  # given, even 0 (then 1 MiB)
    assert _megabytes(None, "EDUKG_MAX_DOWNLOAD_MB") == 7
    monkeypatch.delenv("EDUKG_MAX_DOWNLOAD_MB")
    assert _megabytes(None, "EDUKG_MAX_DOWNLOAD_MB") is None
