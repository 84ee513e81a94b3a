"""How much of a passage's wording a standard's statement shares, weighted by how rare
each word is among the standards compared: a small, cheap complement to meaning that
separates neighbours meaning puts side by side ("two-digit" and "three-digit")."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import orjson

from edukg.services.crosswalks import remembered
from edukg.services.meaning import Indexed
from edukg.services.search import STOPWORDS
from edukg.store.base import Search, Store

_WORD = re.compile(r"\w+")
_READ = 1000  # records read per query


def words_of(text: str) -> frozenset[str]:
    """A text's distinct lower-cased words, stopwords out."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


@dataclass(frozen=True)
class Wording:
    """The statements' words of the records a filter admits, and each word's rarity."""

    words: dict[str, frozenset[str]]  # identifier -> its statement's words
    idf: dict[str, float]
    rarest: float  # the weight of a word no statement has

    def total(self, passage: frozenset[str]) -> float:
        """The weight of all of a passage's words."""
        return sum(self.idf.get(w, self.rarest) for w in passage)

    def shared(self, passage: frozenset[str], total: float, identifier: str) -> float:
        """The rarity-weighted share of `passage`'s words (of weight `total`) that the
        statement has (0-1)."""
        mine = self.words.get(identifier)
        if not mine or not total:
            return 0.0
        return sum(self.idf[w] for w in passage & mine) / total


def wording(store: Store, search: Search, records: Indexed) -> Wording:
    """The wording of `records` (the index of `search`), computed once per release."""
    return remembered(store, ("wording", search), lambda: _read(store, records))


def _read(store: Store, records: Indexed) -> tuple[int, Wording]:
    words: dict[str, frozenset[str]] = {}
    ids = records.identifiers
    for start in range(0, len(ids), _READ):
        for identifier, found in store.by_identifiers(ids[start : start + _READ]).items():
            words[identifier] = words_of(orjson.loads(found.doc).get("description") or "")
    counts: dict[str, int] = {}
    for found_words in words.values():
        for w in found_words:
            counts[w] = counts.get(w, 0) + 1
    n = len(words)
    idf = {w: math.log((n + 1) / (c + 0.5)) for w, c in counts.items()}
    return n, Wording(words, idf, math.log((n + 1) / 0.5))
