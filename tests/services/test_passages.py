"""services/alignment/passages.py: a text cut into passages with offsets, in time linear in its length."""

from __future__ import annotations

import subprocess
import sys

from edukg.services.alignment.passages import MAX_CHARS, MAX_PASSAGES, passages


def test_sentences_and_lines_are_passages_with_their_offsets() -> None:
    text = "Add fractions with unlike denominators. Then compare them!\n- Use a number line\n"
    found = passages(text)
    assert [p.text for p in found] == [
        "Add fractions with unlike denominators.",
        "Then compare them!\n- Use a number line",  # a short line joins the one before
    ]
    for p in found:
        assert text[p.start : p.end] == p.text


def test_decimals_and_codes_do_not_end_a_sentence() -> None:
    found = passages(
        "Round 2.5 to the nearest whole number as in 3.NF.A.1 and explain why it works."
    )
    assert len(found) == 1


def test_short_pieces_join_the_next_and_long_runs_are_cut_at_spaces() -> None:
    assert [p.text for p in passages("Warm-up\nStudents estimate the product of 4.5 and 3.")] == [
        "Warm-up\nStudents estimate the product of 4.5 and 3."
    ]
    long = " ".join(["word"] * 1000)
    pieces = passages(long)
    assert all(len(p.text) <= MAX_CHARS for p in pieces) and len(pieces) > 1
    assert all(not p.text.startswith(" ") and not p.text.endswith(" ") for p in pieces)


def test_a_huge_text_is_packed_into_the_bound() -> None:
    text = " ".join(f"Sentence number {n} is here." for n in range(3000))
    assert len(passages(text)) <= MAX_PASSAGES


def _finishes(text: str, seconds: float) -> bool:
    """Whether splitting `text` ends within `seconds`, in a process of its own: a pattern
    that backtracks holds the interpreter lock, so no thread of this process could even
    notice the time passing."""
    code = "import sys; from edukg.services.alignment.passages import passages; passages(sys.stdin.read())"
    try:
        subprocess.run([sys.executable, "-c", code], input=text, text=True, timeout=seconds,
                       check=True)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    return True


def test_long_runs_of_white_space_are_read_once() -> None:
    # The pattern this replaced (`\\s*\\n\\s*`) retried from every space of a run without a
    # line break: these take minutes that way and milliseconds read once. (How long a real
    # request takes is measured in bench/hostile_text.py, not here.)
    assert _finishes("a" + " " * 400_000 + "1", 20.0)
    assert _finishes(("a" + " " * 2000 + "7") * 200, 20.0)
    assert _finishes("\t \r" * 100_000 + "x", 20.0)
