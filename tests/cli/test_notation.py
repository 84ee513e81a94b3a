"""Statements' notation as plain text in the terminal (cli/notation.py): the rule that
tells a formula from a price, the formulas the export writes, and `edukg align` /
`edukg check` printing them, run as the command runs."""

from __future__ import annotations

import pytest

from edukg.cli.notation import math_spans, plain, tex_plain
from harness.processes import edukg, tree_env

# 7.EE.B.3 as the export writes it: prices and formulas in one sentence.
SEVEN_EE_B_3 = (
    "*For example: If a woman making $25 an hour gets a 10% raise, she will make an"
    " additional $\\frac{1}{10}$ of her salary an hour, or $2.50, for a new salary of"
    " $27.50. If you want to place a towel bar $9\\frac{3}{4}$ inches long in the center of"
    " a door that is $27 \\frac{1}{2}$ inches wide, you will need to place the bar about 9"
    " inches from each edge.*"
)


def test_a_price_is_text_and_a_formula_is_mathematics() -> None:
    spans = math_spans(SEVEN_EE_B_3)
    assert [part for is_math, part in spans if is_math] == [
        "\\frac{1}{10}", "9\\frac{3}{4}", "27 \\frac{1}{2}",
    ]  # fmt: skip
    text = "".join(part for is_math, part in spans if not is_math)
    assert "$25 an hour" in text and "$2.50" in text and "$27.50" in text
    for prices in ("using $ and ¢ symbols", "paid $50 per week plus $3 per sale",
                   "We paid $75 for 15 hamburgers, a rate of $5 per hamburger."):  # fmt: skip
        assert plain(prices) == prices
    assert plain("a formula $5$ and $14$") == "a formula 5 and 14"


@pytest.mark.parametrize(
    ("tex", "shown"),
    [
        ("\\frac{1}{10}", "1/10"),
        ("9\\frac{3}{4}", "9 3/4"),
        ("27 \\frac{1}{2}", "27 1/2"),
        ("\\neq", "≠"),
        ("b \\neq 0", "b ≠ 0"),
        ("n \\geq 1", "n ≥ 1"),
        ("a \\le b", "a ≤ b"),
        ("2\\times 7", "2 × 7"),
        ("56 \\div 8", "56 ÷ 8"),
        ("a \\pm bi", "a ± bi"),
        ("\\frac{n \\times a}{n \\times b}", "(n × a)/(n × b)"),
        ("\\frac{\\frac{1}{2}}{\\frac{1}{4}}", "(1/2)/(1/4)"),
        ("\\frac{a(x)}{b(x)}", "a(x)/b(x)"),
        ("\\frac{(y – 2)}{(x – 1)} = 3", "(y - 2)/(x - 1) = 3"),
        ("x^{2} + y^{2} = 3", "x² + y² = 3"),
        ("3^{-5}", "3⁻⁵"),
        ("(1.01)^{12t}", "(1.01)^(12t)"),
        ("5^{\\frac{1}{3}}", "5^(1/3)"),
        ("\\frac{1}{3}^{3}", "(1/3)³"),
        ("\\left(5^{\\frac{1}{3}}\\right)^{3}", "(5^(1/3))³"),
        ("\\sqrt{2}", "√2"),
        ("\\sqrt{x + 1}", "√(x + 1)"),
        ("\\sqrt[3]{8}", "³√8"),
        ("\\sin^{2}(\\theta) + \\cos^{2}(\\theta) = 1", "sin²(θ) + cos²(θ) = 1"),
        ("120^{\\circ}", "120°"),
        ("-3 \\degree C", "-3°C"),
        ("n^{\\text{th}}", "nth"),
        ("c(v_{x}, v_{2})", "c(vₓ, v₂)"),
        ("8 + ? = 11, 5 = \\Box - 3", "8 + ? = 11, 5 = □ - 3"),
        ("\\pi-x", "π-x"),
    ],
)
def test_a_formula_as_plain_text(tex: str, shown: str) -> None:
    assert tex_plain(tex) == shown


def test_emphasis_markers_go_and_other_asterisks_stay() -> None:
    assert plain("Solve. *For example, add.*") == "Solve. For example, add."
    assert plain("**Suggested Citation:** NGA") == "Suggested Citation: NGA"
    assert plain("*Understand the following as special cases:* the numbers") == (
        "Understand the following as special cases: the numbers"
    )
    assert plain("3 * 4 = 12 and 2*3") == "3 * 4 = 12 and 2*3"
    assert plain("*see $\\frac{1}{2}$*") == "see 1/2"
    assert plain(SEVEN_EE_B_3).startswith("For example: If a woman making $25 an hour")
    assert plain(SEVEN_EE_B_3).endswith("additional 1/10 of her salary an hour, or $2.50, for a"
                                        " new salary of $27.50. If you want to place a towel"
                                        " bar 9 3/4 inches long in the center of a door that"
                                        " is 27 1/2 inches wide, you will need to place the"
                                        " bar about 9 inches from each edge.")  # fmt: skip


def _flat(text: str) -> str:
    """A table's text as one line: cells wrap where the terminal is narrow."""
    return " ".join(text.split())


def test_the_terminal_prints_notation_as_plain_text(sample_db: str) -> None:
    wide = tree_env(COLUMNS="400")
    done = edukg("check", "A woman earns $25 an hour; a raise adds 1/10 of her salary.",
                 "--standard", "7.EE.B.3", "--jurisdiction", "Multi-State", "--db", sample_db,
                 env=wide)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = _flat(done.stdout)
    assert "an additional 1/10 of her salary an hour, or $2.50" in out, out
    assert "towel bar 9 3/4 inches" in out and "27 1/2 inches wide" in out
    assert "\\frac" not in out and "*For example" not in out and "For example:" in out
    # A text's own brackets are text, never markup: they are shown, and do not fail.
    said = "On [a, b] [/b]: understand a fraction 1/b, one part of a whole cut in b equal parts."
    done = edukg("align", said, "--jurisdiction", "Multi-State", "--grade", "3",
                 "--db", sample_db, env=wide)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = _flat(done.stdout)
    assert "Understand a fraction 1/b as the quantity formed by 1 part" in out, out
    assert "\\frac" not in out and "$" not in out
    assert "[a, b] [/b]" in out
