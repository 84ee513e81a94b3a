"""Words: a text's terms, and BM25 over the statements (or component descriptions) a
filter admits, computed in memory once per release.

Alignment ranks a whole text against a few hundred to a few thousand statements; asking
the store's full-text index once per passage cost more than the rest of an alignment
(docs/benchmarks.md, "Aligning a text and similar standards": shared wording), while
scoring here is a handful of array additions.
Terms are lower-cased words and whole numbers ("within 100" and "denominators 2, 3, 4"
carry grade and topic), common words out, each cut to a stem so that "fractions" meets
"fraction" and "multiplying" meets "multiply".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edukg.services.search import STOPWORDS

# Linear in the text's length: each alternative consumes what it matches, nothing
# backtracks over a long run (services.alignment.passages says why that matters).
_TERM = re.compile(r"[a-z]+|[0-9]+")
_STOP = STOPWORDS | frozenset(
    [
        "about",
        "after",
        "all",
        "also",
        "an",
        "any",
        "be",
        "been",
        "being",
        "both",
        "but",
        "can",
        "could",
        "do",
        "does",
        "each",
        "every",
        "how",
        "if",
        "into",
        "its",
        "may",
        "might",
        "more",
        "most",
        "much",
        "must",
        "not",
        "no",
        "only",
        "other",
        "our",
        "out",
        "over",
        "same",
        "should",
        "so",
        "some",
        "such",
        "than",
        "too",
        "under",
        "up",
        "use",
        "used",
        "using",
        "very",
        "what",
        "when",
        "where",
        "who",
        "why",
        "would",
        "you",
        "your",
        "we",
        "us",
        "i",
        "he",
        "she",
        "his",
        "her",
        "one",
        "two",
    ]
)
# (suffix, what replaces it), tried longest first, on a word that keeps at least
# _STEM_KEEP letters: "multiplies" and "multiplying" both become "multiply".
_SUFFIXES = (("ational", ""), ("ization", ""), ("ations", ""), ("ements", ""), ("ation", ""),
             ("ement", ""), ("ments", ""), ("ities", ""), ("ness", ""), ("ment", ""),
             ("ings", ""), ("ity", ""), ("ing", ""), ("ies", "y"), ("ied", "y"), ("ers", ""),
             ("ed", ""), ("er", ""), ("ly", ""), ("al", ""))  # fmt: skip
_ES_PLURALS = ("sses", "xes", "ches", "shes", "zes")  # boxes, matches: "es" off; shapes: "s"
_STEM_KEEP = 3
K1, B = 1.2, 0.75  # BM25's usual constants


def stem(word: str) -> str:
    """A word cut to a stem (a light suffix stripper, the same on both sides of a match)."""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _STEM_KEEP:
            return word[: -len(suffix)] + replacement
    if word.endswith(_ES_PLURALS) and len(word) - 2 >= _STEM_KEEP:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) - 1 >= _STEM_KEEP:
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """A text's terms in order: words stemmed, numbers as written, common words out."""
    return [t if t[0].isdigit() else stem(t) for t in _TERM.findall(text.lower()) if t not in _STOP]


@dataclass(frozen=True)
class Words:
    """BM25 over a list of texts: each term's postings (text numbers and weights)."""

    count: int  # texts indexed
    vocab: dict[str, int]
    idf: Any  # float32, one per term
    postings: list[tuple[Any, Any]]  # per term: (int32 text numbers, float32 weights)

    def scores(self, text: str, within: Any = None) -> Any:
        """Each indexed text's BM25 score for `text` (float32; 0 where nothing matches).
        A term repeated in the query counts by the log of its count. `within` (a boolean
        mask over the texts) counts a term's rarity among those texts alone: a word rare
        in grade 3's standards weighs as such when only grade 3's compete."""
        import numpy as np  # noqa: PLC0415

        out = np.zeros(self.count, dtype=np.float32)
        total = int(within.sum()) if within is not None else self.count
        for term, n in Counter(terms(text)).items():
            j = self.vocab.get(term)
            if j is None:
                continue
            docs, weights = self.postings[j]
            idf = self.idf[j]
            if within is not None:
                df = int(within[docs].sum())
                if not df:
                    continue
                idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
            out[docs] += (1.0 + math.log(n)) * idf * weights
        return out

    def score_of(self, text: str, n: int) -> float:
        """Text `n`'s BM25 score for `text` alone (what `scores` gives it)."""
        import numpy as np  # noqa: PLC0415

        total = 0.0
        for term, count in Counter(terms(text)).items():
            j = self.vocab.get(term)
            if j is None:
                continue
            docs, weights = self.postings[j]
            at = int(np.searchsorted(docs, n))
            if at < len(docs) and docs[at] == n:
                total += (1.0 + math.log(count)) * float(self.idf[j]) * float(weights[at])
        return total

    def rarity(self, term: str) -> float:
        """A term's inverse document frequency (0 for a term no text has)."""
        j = self.vocab.get(term)
        return float(self.idf[j]) if j is not None else 0.0

    def bytes(self) -> int:
        """About what the index holds in memory."""
        return 120 * len(self.vocab) + sum(int(d.nbytes + w.nbytes) for d, w in self.postings)


def index(texts: Sequence[str]) -> Words:
    """The BM25 index of `texts`."""
    import numpy as np  # noqa: PLC0415

    counts = [Counter(terms(t)) for t in texts]
    lengths = np.array([sum(c.values()) for c in counts], dtype=np.float32)
    average = float(lengths.mean()) if len(texts) and lengths.sum() else 1.0
    by_term: dict[str, tuple[list[int], list[float]]] = {}
    for n, found in enumerate(counts):
        norm = K1 * (1.0 - B + B * float(lengths[n]) / average)
        for term, f in found.items():
            docs, weights = by_term.setdefault(term, ([], []))
            docs.append(n)
            weights.append(f * (K1 + 1.0) / (f + norm))
    vocab = {term: j for j, term in enumerate(by_term)}
    total = len(texts)
    idf = np.array(
        [math.log(1.0 + (total - len(d) + 0.5) / (len(d) + 0.5)) for d, _ in by_term.values()],
        dtype=np.float32,
    )
    postings = [
        (np.array(d, dtype=np.int32), np.array(w, dtype=np.float32)) for d, w in by_term.values()
    ]
    return Words(total, vocab, idf, postings)


def shared(text: str, other: str, words: Words, most: int = 6) -> list[str]:
    """The words of `text` whose stems `other` has too, rarest first (for evidence)."""
    theirs = set(terms(other))
    seen: dict[str, str] = {}
    for word in _TERM.findall(text.lower()):
        if word in _STOP:
            continue
        key = word if word[0].isdigit() else stem(word)
        if key in theirs and key not in seen:
            seen[key] = word
    ranked = sorted(seen, key=lambda k: -words.rarity(k))
    return [seen[k] for k in ranked[:most]]
