"""Align a text (a lesson, an item, an activity) to standards, with the evidence.

The text is cut into passages (`services.passages`); each passage is matched against the
learning components and against the standards' own statements, by meaning where the
loaded version has a semantic index (by words otherwise, as search is). A standard's
evidence in a passage is the better of how alike the passage is to its statement and to
the learning components that support it, so that a standard is aligned because the text
teaches the skills it is made of, plus a small bonus for the passage's wording that the
statement shares (services.wording); its score is its best passage's evidence. Scores are
cosine similarities of the same model for every request (and a bounded bonus), so they
compare across requests (docs/api.md, "Aligning a text").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import orjson

from edukg.model.errors import ValidationError
from edukg.model.records import with_encoded
from edukg.model.vocabulary import COMPONENT, STANDARD
from edukg.services import rank
from edukg.services.crosswalks import framework, framework_items
from edukg.services.meaning import Indexed, indexed
from edukg.services.passages import Passage, passages
from edukg.services.search import query_words
from edukg.services.wording import wording, words_of
from edukg.store.base import SUPPORTED, Members, Search, Store

MAX_TEXT = 20_000  # characters
MIN_SCORE = 0.35  # below this, a passage and a statement share words, not a skill
LC_FLOOR = 0.45  # a learning component this alike to a passage is taught by it
# Words add at most this to a passage's evidence by meaning (bench/align_eval.py: 0.05,
# 0.1 and 0.2 compared; 0.1 raised every measure, 0.2 lowered hit@1).
WORDS_WEIGHT = 0.1
_STANDARDS_PER_PASSAGE = 30
_COMPONENTS_PER_PASSAGE = 20
_PASSAGES_SHOWN = 3
_COMPONENTS_SHOWN = 5
_LEXICAL_POOL = 30


@dataclass(frozen=True)
class AlignQuery:
    """What to align, and among which standards."""

    text: str
    framework: str | None = None  # a framework's CASE UUID
    jurisdiction: str | None = None
    subject: str | None = None
    grades_mask: int = 0
    statement_type: str | None = "Standard"
    limit: int = 10


@dataclass
class _Evidence:
    """One standard's evidence: its statement's cosine with each passage, and the
    learning components of it that each passage teaches (with their cosines)."""

    statement: Any = None  # float32 array, one cosine per passage
    components: dict[int, dict[str, float]] = field(default_factory=dict)  # passage -> lc
    words: dict[int, float] = field(default_factory=dict)  # passage -> shared wording
    near: set[int] = field(default_factory=set)  # passages where it is among the nearest

    def at(self, passage: int) -> float:
        """The evidence in one passage: the better of statement and components."""
        lcs = self.components.get(passage)
        stated = float(self.statement[passage]) if self.statement is not None else 0.0
        best = max(stated, max(lcs.values()) if lcs else 0.0)
        return min(1.0, best + WORDS_WEIGHT * self.words.get(passage, 0.0))

    def statement_best(self) -> float:
        return float(self.statement.max()) if self.statement is not None else 0.0

    def score(self) -> float:
        """The best passage's evidence (at(p) for every passage, as one array)."""
        if self.statement is None:
            return max((self.at(p) for p in set(self.components) | set(self.words)), default=0.0)
        best = self.statement.copy()
        for p, lcs in self.components.items():
            best[p] = max(best[p], *lcs.values())
        for p, share in self.words.items():
            best[p] += WORDS_WEIGHT * share
        return min(1.0, float(best.max()))


def align(store: Store, query: AlignQuery) -> dict[str, Any]:
    """`{"data": [...], "ranking": ..., "passages": n}`: the standards `query.text`
    addresses, best first, each its record with `score` and `evidence`."""
    text = query.text
    if not text.strip():
        raise ValidationError("`text` is empty.", {"parameter": "text"})
    if len(text) > MAX_TEXT:
        raise ValidationError(f"`text` is longer than {MAX_TEXT} characters.",
                              {"parameter": "text"})  # fmt: skip
    allowed = _framework_members(store, query)
    parts = passages(text)
    search = Search(STANDARD, (), query.jurisdiction, query.subject, query.statement_type,
                    query.grades_mask)  # fmt: skip
    standards = indexed(store, search)
    vectors = rank.vectors([p.text for p in parts]) if standards is not None else None
    if standards is not None and vectors is not None:
        components = indexed(store, Search(COMPONENT, (), subject=query.subject))
        found = _by_meaning(store, parts, search, vectors, standards, components, allowed)
        ranking = "semantic"
    else:
        found = _by_words(store, parts, search, allowed)
        ranking = "lexical"
    data = _answer(store, found, parts, query.limit)
    return {"data": data, "ranking": ranking, "passages": len(parts)}


def _framework_members(store: Store, query: AlignQuery) -> set[str] | None:
    if query.framework is None:
        return None
    found = framework(store, query.framework)
    items, _ = framework_items(store, Members(found.identifier))
    return set(items)


def _by_meaning(
    store: Store,
    parts: list[Passage],
    search: Search,
    vectors: Any,
    standards: Indexed,
    components: Indexed | None,
    allowed: set[str] | None,
) -> dict[str, _Evidence]:
    """Each candidate standard's evidence, from the passages' vectors."""
    found: dict[str, _Evidence] = defaultdict(_Evidence)
    for p, hits in enumerate(standards.top(vectors, _STANDARDS_PER_PASSAGE, MIN_SCORE)):
        for identifier, _ in hits:
            found[identifier].near.add(p)
    if components is not None and components.identifiers:
        matched = components.top(vectors, _COMPONENTS_PER_PASSAGE, LC_FLOOR)
        supported: dict[str, list[str]] = defaultdict(list)
        for lc, standard in store.links_many(SUPPORTED, sorted({c for h in matched for c, _ in h})):
            if standard in standards.rows:
                supported[lc].append(standard)
        for p, hits in enumerate(matched):
            for lc, similarity in hits:
                for standard in supported.get(lc, ()):
                    found[standard].components.setdefault(p, {})[lc] = similarity
    _add_words(store, parts, search, standards, found)
    kept = {k: v for k, v in found.items() if allowed is None or k in allowed}
    identifiers = list(kept)
    sims = standards.similarities(vectors, identifiers)
    for column, identifier in enumerate(identifiers):
        kept[identifier].statement = sims[:, column]
    return kept


def _add_words(
    store: Store,
    parts: list[Passage],
    search: Search,
    standards: Indexed,
    found: dict[str, _Evidence],
) -> None:
    """Shared wording (services.wording), a bonus of up to WORDS_WEIGHT to a standard's
    evidence in the passages where meaning found it (its nearest or its components')."""
    known = wording(store, search, standards)
    passage_words = [words_of(part.text) for part in parts]
    totals = [known.total(words) for words in passage_words]
    for identifier, evidence in found.items():
        for p in evidence.near | set(evidence.components):
            share = known.shared(passage_words[p], totals[p], identifier)
            if share > 0:
                evidence.words[p] = share


def _by_words(
    store: Store, parts: list[Passage], search: Search, allowed: set[str] | None
) -> dict[str, _Evidence]:
    """Each standard's evidence by words (BM25 relevance, mapped onto 0-1 as search maps
    it): without a semantic index or the model. Learning components add evidence to the
    standards found by their statements."""
    import numpy as np  # noqa: PLC0415

    found: dict[str, _Evidence] = {}
    lcs: list[list[tuple[str, float]]] = []
    for p, part in enumerate(parts):
        words = query_words(part.text)
        if not words:
            lcs.append([])
            continue
        query = Search(STANDARD, words, search.jurisdiction, search.subject,
                       search.statement_type, search.grades_mask)  # fmt: skip
        for identifier, _, relevance in store.search(query, _LEXICAL_POOL):
            if allowed is not None and identifier not in allowed:
                continue
            evidence = found.setdefault(identifier, _Evidence(np.zeros(len(parts), np.float32)))
            evidence.statement[p] = _relevance(relevance)
        taught = store.search(Search(COMPONENT, words, subject=search.subject), _LEXICAL_POOL)
        lcs.append([(i, _relevance(r)) for i, _, r in taught])
    _add_components(store, found, lcs)
    return found


def _add_components(
    store: Store, found: dict[str, _Evidence], lcs: list[list[tuple[str, float]]]
) -> None:
    """Each passage's matched learning components, as evidence for the standards in
    `found` that they support."""
    supported = store.links_many(SUPPORTED, sorted({c for h in lcs for c, _ in h}))
    by_lc: dict[str, list[str]] = defaultdict(list)
    for lc, standard in supported:
        if standard in found:
            by_lc[lc].append(standard)
    for p, matched in enumerate(lcs):
        for lc, similarity in matched:
            for standard in by_lc.get(lc, ()):
                found[standard].components.setdefault(p, {})[lc] = similarity


def _relevance(relevance: float) -> float:
    return min(0.9999, relevance / (relevance + 1.0))


def _answer(
    store: Store, found: dict[str, _Evidence], parts: list[Passage], limit: int
) -> list[bytes]:
    """The best `limit` standards' records, each with its score and evidence."""
    scored = sorted(((e.score(), i) for i, e in found.items()), key=lambda t: (-t[0], t[1]))
    best = [(score, i) for score, i in scored if score >= MIN_SCORE][:limit]
    records = store.by_identifiers([i for _, i in best])
    shown = {lc for _, i in best for lc in _shown_components(found[i])}
    described = {
        i: orjson.loads(f.doc).get("description")
        for i, f in store.by_identifiers(sorted(shown)).items()
    }
    out: list[bytes] = []
    for score, identifier in best:
        record = records.get(identifier)
        if record is None:
            continue
        evidence = _evidence(found[identifier], parts, described)
        extra = (
            b'"score":' + orjson.dumps(round(score, 4)) + b',"evidence":' + orjson.dumps(evidence)
        )
        out.append(with_encoded(record.doc, extra))
    return out


def _strongest(evidence: _Evidence) -> list[int]:
    """The passages that support a standard, strongest first (the best always)."""
    count = len(evidence.statement) if evidence.statement is not None else 0
    passages_ = set(range(count)) | set(evidence.components)
    ranked = sorted(passages_, key=lambda p: (-evidence.at(p), p))
    floor = max(MIN_SCORE, evidence.score() - 0.15)
    return [p for p in ranked if evidence.at(p) >= floor][:_PASSAGES_SHOWN] or ranked[:1]


def _shown_components(evidence: _Evidence) -> set[str]:
    return {lc for p in _strongest(evidence) for lc in _top_components(evidence, p)}


def _top_components(evidence: _Evidence, passage: int) -> list[str]:
    lcs = evidence.components.get(passage, {})
    return sorted(lcs, key=lambda lc: (-lcs[lc], lc))[:_COMPONENTS_SHOWN]


def _evidence(
    evidence: _Evidence, parts: list[Passage], described: dict[str, Any]
) -> dict[str, Any]:
    shown = []
    for p in sorted(_strongest(evidence)):
        part = parts[p]
        lcs = evidence.components.get(p, {})
        stated = float(evidence.statement[p]) if evidence.statement is not None else 0.0
        shown.append({
            "start": part.start,
            "end": part.end,
            "text": part.text,
            "similarity": round(evidence.at(p), 4),
            "statementSimilarity": round(stated, 4),
            "learningComponents": [
                {"identifier": lc, "description": described.get(lc), "similarity": round(lcs[lc], 4)}
                for lc in _top_components(evidence, p)
            ],
        })  # fmt: skip
    return {"statementSimilarity": round(evidence.statement_best(), 4), "passages": shown}
