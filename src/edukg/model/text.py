"""What counts as no text at all: a text of spaces, zero-width characters or a byte-order
mark shows a reader nothing, so it is refused as empty rather than scored."""

from __future__ import annotations

import unicodedata

# Letters that render as nothing (Hangul fillers, the blank Braille pattern): Unicode
# calls them letters or symbols, not format characters, but they are used as blanks.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def is_blank(text: str) -> bool:
    """Whether `text` holds nothing a reader sees: only white space, format characters
    (zero-width space and joiners, the byte-order mark U+FEFF, the word joiner, the soft
    hyphen), control characters and blank letters."""
    return all(_invisible(c) for c in text)


def _invisible(c: str) -> bool:
    return c.isspace() or c in _BLANK_LETTERS or unicodedata.category(c) in ("Cf", "Cc")
