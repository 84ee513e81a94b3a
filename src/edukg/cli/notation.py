"""Statements' notation as plain text for a terminal: `$\\frac{1}{10}$` reads 1/10,
`$\\neq$` reads ≠, and markdown emphasis (`*For example: ...*`) loses its asterisks.

The export writes mathematics as TeX between dollar signs, in the same sentences as
prices ("a woman making $25 an hour ... an additional $\\frac{1}{10}$"). A pair of
dollar signs is read as mathematics only when what lies between them reads as
mathematics (`math_spans`); the explorer applies the same rule before KaTeX renders
what it finds (static/explore-notation.js, `mathSpans`), so a price stays a price in
both.
"""

from __future__ import annotations

import re

_DOLLAR = re.compile(r"(?<!\\)\$")
# Two words in a row (one of three letters or more) are prose, not mathematics: what
# lies between two prices ("$25 an hour ... additional $") is never a formula.
_PROSE = re.compile(r"[A-Za-z]{2,}\s+[A-Za-z]{3,}|[A-Za-z]{3,}\s+[A-Za-z]{2,}")
_WORDS_ALLOWED = re.compile(r"\\(?:text|mathrm|textrm|operatorname)\s*\{[^{}]*\}|\\[A-Za-z]+")


def math_spans(text: str) -> list[tuple[bool, str]]:
    """`text` cut into (is mathematics, part) pieces, the dollar signs of a formula gone.

    A dollar sign opens a formula when the next one closes it and what lies between
    starts with no space, holds no run of words and is not followed by a digit (the
    rule of pandoc's tex_math_dollars, with prose excluded); any other dollar sign is
    text: "$5 per hamburger", "using $ and ¢".
    """
    marks = [m.start() for m in _DOLLAR.finditer(text)]
    out: list[tuple[bool, str]] = []
    at = i = 0
    while i + 1 < len(marks):
        start, end = marks[i], marks[i + 1]
        if _reads_as_math(text[start + 1 : end], text[end + 1 : end + 2]):
            out += [(False, text[at:start]), (True, text[start + 1 : end])]
            at, i = end + 1, i + 2
        else:
            i += 1
    out.append((False, text[at:]))
    return [(is_math, part) for is_math, part in out if part]


_DIGITS = frozenset("0123456789")  # ASCII, as the explorer's /[0-9]/


def _reads_as_math(inner: str, after: str) -> bool:
    if not inner or inner[0].isspace() or after in _DIGITS:
        return False
    return _PROSE.search(_WORDS_ALLOWED.sub(" ", inner)) is None


# Emphasis markers: a run of asterisks that opens (before a word, after a space or the
# start) or closes (after a word, before a space, punctuation or the end), as markdown
# reads them; "3 * 4" keeps its asterisk.
_EMPHASIS = re.compile(
    r"(?:(?<![^\s(\"'\u201c])\*{1,2}(?=[^\s*]))|(?:(?<=[^\s*])\*{1,2}(?![^\s.,;:!?)\"'\u201d]))"
)
_SLOT = "\ue000"  # a formula's place while emphasis is dropped (a private-use character)


def plain(text: str) -> str:
    """A statement as plain text: its formulas in Unicode, its emphasis markers dropped."""
    formulas: list[str] = []
    held: list[str] = []
    for is_math, part in math_spans(text.replace(_SLOT, "")):
        if is_math:
            formulas.append(tex_plain(part))
            held.append(_SLOT)
        else:
            held.append(part)
    flat = _EMPHASIS.sub("", "".join(held))
    pieces = iter(formulas)
    return re.sub(_SLOT, lambda _: next(pieces), flat)


_SYMBOLS = {
    "times": "×", "div": "÷", "cdot": "·", "pm": "±", "mp": "∓", "neq": "≠", "ne": "≠",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "lt": "<", "gt": ">", "approx": "≈",
    "sim": "∼", "cong": "≅", "equiv": "≡", "to": "→", "rightarrow": "→", "Rightarrow": "⇒",
    "leftrightarrow": "↔", "pi": "π", "theta": "θ", "alpha": "α", "beta": "β",
    "gamma": "γ", "delta": "δ", "Delta": "Δ", "lambda": "λ", "mu": "μ", "sigma": "σ",
    "Sigma": "Σ", "phi": "φ", "omega": "ω", "infty": "∞", "degree": "°", "circ": "°",
    "angle": "∠", "triangle": "△", "perp": "⊥", "parallel": "∥", "ldots": "…",
    "dots": "…", "cdots": "⋯", "Box": "□", "square": "□", "%": "%", "$": "$", "{": "{",
    "}": "}", "&": "&", "#": "#", "_": "_", ",": " ", ";": " ", ":": " ", "!": "",
    "quad": " ", "qquad": " ", " ": " ", "\\": " ",
}  # fmt: skip
# Binary operators and relations: spaced on both sides, whatever the source's spacing.
_SPACED = frozenset("×÷±∓≠≤≥≈∼≅≡→⇒↔")
_WORDS = frozenset(("sin", "cos", "tan", "sec", "csc", "cot", "log", "ln", "exp", "lim", "min",
                    "max", "gcd", "arcsin", "arccos", "arctan"))  # fmt: skip
_KEPT = frozenset(("text", "mathrm", "textrm", "mathit", "mathbf", "textbf", "operatorname",
                   "mbox"))  # fmt: skip
_UP = dict(zip("0123456789+-=()ni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", strict=True))
_DOWN = dict(
    zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)


def tex_plain(tex: str) -> str:
    """One TeX formula as Unicode text: \\frac{a}{b} a/b, x^{2} x², \\sqrt{2} √2."""
    reader = _Tex(tex.replace("—", "-").replace("–", "-"))
    text = " ".join(reader.sequence().split())
    # The source's spacing inside parentheses and around a degree sign: (5 1/3), -3°C.
    text = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text))
    return re.sub(r"\s+°", "°", re.sub(r"°\s+(?=[CF]\b)", "°", text))


class _Tex:
    """A small reader of the TeX the export writes: groups, commands, scripts."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.at = 0

    def sequence(self, until: str = "") -> str:
        out = ""
        while self.at < len(self.src) and self.src[self.at] != until:
            piece = self.atom(after=out)
            while self.at < len(self.src) and self.src[self.at] in "^_":
                mark = self.src[self.at]
                self.at += 1
                if "/" in piece and not _enclosed(piece):  # \frac{1}{3}^{3}: (1/3)³
                    piece = f"({piece.strip()})"
                piece += _script(self.atom(), _UP if mark == "^" else _DOWN, mark)
            out += piece
        return out

    def group(self) -> str:
        """A braced group's text (the braces gone), or the next atom alone."""
        while self.at < len(self.src) and self.src[self.at] == " ":
            self.at += 1
        if self.src[self.at : self.at + 1] == "{":
            self.at += 1
            inner = self.sequence("}")
            self.at += 1
            return inner.strip()
        return self.atom().strip()

    def atom(self, after: str = "") -> str:
        if self.at >= len(self.src):
            return ""
        char = self.src[self.at]
        if char in "{}":
            return self.group() if char == "{" else self._skip()
        if char != "\\":
            self.at += 1
            return char
        found = re.match(r"\\([A-Za-z]+|.?)", self.src[self.at :])
        assert found is not None  # a backslash always matches
        self.at += len(found.group(0))
        return self.command(found.group(1), after)

    def _skip(self) -> str:
        self.at += 1
        return ""

    def command(self, name: str, after: str) -> str:
        if name in ("frac", "dfrac", "tfrac"):
            top, bottom = _operand(self.group()), _operand(self.group())
            mixed = " " if after[-1:].isdigit() else ""  # 9\frac{3}{4}: 9 3/4
            return f"{mixed}{top}/{bottom}"
        if name == "sqrt":
            index = re.match(r"\[([^\]]*)\]", self.src[self.at :])  # \sqrt[3]{8}: ³√8
            if index:
                self.at += len(index.group(0))
            degree = _script(index.group(1), _UP, "^") if index else ""
            return f"{degree}√{_operand(self.group())}"
        if name in ("left", "right"):
            return self._delimiter()
        if name in _KEPT:
            return self.group()
        if name in _WORDS:
            return name
        symbol = _SYMBOLS.get(name, name)
        return f" {symbol} " if symbol in _SPACED else symbol

    def _delimiter(self) -> str:
        char = self.src[self.at : self.at + 1]
        self.at += 1
        return "" if char == "." else char


def _operand(text: str) -> str:
    """A fraction's part or a root's argument, parenthesized when it is more than one
    number, letter or parenthesized whole: \\frac{n \\times a}{b} (n × a)/b."""
    if re.fullmatch(r"[\w.]+|\S", text) or _enclosed(re.sub(r"^[\w.]+", "", text)):
        return text
    return f"({text})"


def _enclosed(text: str) -> bool:
    """Whether `text` is one parenthesized whole: (x+1), not (a)+(b)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for n, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and n < len(text) - 1:
            return False
    return True


def _script(text: str, table: dict[str, str], mark: str) -> str:
    """A superscript or subscript: in Unicode where every character has a form, else
    ^(...) or _(...); a degree sign (^{\\circ}) as it is."""
    text = text.strip()
    if text in ("°", "st", "nd", "rd", "th"):  # 120^{\\circ}, n^{\\text{th}}
        return text
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    return mark + (text if len(text) <= 1 else f"({text})")
