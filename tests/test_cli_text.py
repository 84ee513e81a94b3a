"""`edukg align` and `edukg check`: what the text argument names, through the real
command line (a file that exists, a path that does not, a sentence, standard input)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from edukg.cli.output import EXIT_OK, EXIT_USAGE
from harness.processes import edukg

SENTENCE = "Students add 1/2 and 1/3 with unlike denominators."


@pytest.mark.parametrize(
    "argument",
    ["missing.txt", "lessons/unit-1", "./draft.md", "unit 3/lesson 2.txt", "my lesson.DOCX"],
)
def test_a_path_that_names_no_file_is_an_error(demo_db: str, argument: str) -> None:
    for command in (["align", argument], ["check", argument, "--standard", "3.NF.A.1"]):
        done = edukg(*command, "--db", demo_db, "--json")
        assert done.returncode == EXIT_USAGE, (command, done.stdout)
        assert done.stdout == ""
        assert f"no file {argument}" in done.stderr and "standard input" in done.stderr


def test_a_sentence_or_a_file_is_the_text(demo_db: str, tmp_path: Path) -> None:
    said = edukg("align", SENTENCE, "--db", demo_db, "--json", "--limit", "3")
    assert said.returncode == EXIT_OK, said.stderr
    item = tmp_path / "item.txt"
    item.write_text(SENTENCE, encoding="utf-8")
    read = edukg("align", str(item), "--db", demo_db, "--json", "--limit", "3")
    assert read.returncode == EXIT_OK, read.stderr
    piped = edukg("align", "-", "--db", demo_db, "--json", "--limit", "3", stdin=SENTENCE)
    assert orjson.loads(said.stdout) == orjson.loads(read.stdout) == orjson.loads(piped.stdout)
    # A word, a number, a code: a (short) text, not a file name.
    for text in ("fractions", "3/4", "6.RP.A.3.c", "K.CC", "saved as a .csv"):
        done = edukg("align", text, "--db", demo_db, "--json", "--limit", "1")
        assert done.returncode == EXIT_OK, (text, done.stderr)


def test_a_text_a_reader_cannot_see_is_empty(demo_db: str, tmp_path: Path) -> None:
    """Zero-width characters and a byte-order mark are no text: refused as the API refuses
    them, whether given, piped or in a file."""
    blank = tmp_path / "blank.txt"
    blank.write_bytes("\ufeff\u200b\n".encode())
    for command, stdin in ((["align", "\u200b\u200c\ufeff"], None), (["align", "-"], "\ufeff \n"),
                           (["check", str(blank), "--standard", "3.NF.A.1"], None)):  # fmt: skip
        done = edukg(*command, "--db", demo_db, stdin=stdin)
        assert done.returncode == EXIT_USAGE, (command, done.stdout)
        assert "`text` is empty." in done.stderr
