"""Search by words, by code and by meaning, for standards, components and skills.

Lexical ranking is the store's (BM25 on SQLite's FTS5, ts_rank_cd on PostgreSQL); where
the loaded version has a semantic index, dense embeddings are fused with it by
reciprocal rank. A statement code typed as the query is found first, as people write
codes (6.RP.3c for 6.RP.A.3.c: services.codes).
"""

from __future__ import annotations

import re
from dataclasses import replace

import orjson

from edukg.model.embedding import INSTALL_MODEL
from edukg.model.errors import ValidationError
from edukg.model.records import with_encoded
from edukg.model.vocabulary import COMPONENT, SKILL, STANDARD
from edukg.services import rank
from edukg.services.codes import looks_like_code, resolve
from edukg.store.base import Matching, Row, Search, Store

# Search: lexical (BM25 on SQLite's FTS5, ts_rank_cd on PostgreSQL), fused with dense
# embeddings by reciprocal rank where the loaded version has a semantic index

_WORD = re.compile(r"\w+")
# Words too common to rank by: matching them would touch nearly every record.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "which",
        "will",
        "with",
        "within",
        "without",
    ]
)
MAX_WORDS = 32


def _with_score(doc: bytes, score: float) -> bytes:
    return with_encoded(doc, b'"score":' + orjson.dumps(score))


def query_words(text: str) -> tuple[str, ...]:
    """The words a text is ranked by: lower-cased, stopwords out, each once, at most
    MAX_WORDS."""
    found = _WORD.findall(text.lower())
    return tuple(dict.fromkeys(w for w in found if w not in STOPWORDS))[:MAX_WORDS]


def _exclusive(query: str | None, code: str | None) -> None:
    if (query is None) == (code is None):
        raise ValidationError(
            "Provide exactly one of `query` (words) or `statementCode` (a code).",
            {"parameters": ["query", "statementCode"]},
        )


def _search(
    store: Store,
    kind: str,
    query: str,
    filters: Search,
    codes: bool,
    limit: int,
    mode: str = "hybrid",
) -> list[bytes]:
    out: dict[str, bytes] = {}
    if codes and looks_like_code(query):
        for identifier, doc in _code_hits(store, kind, query, filters, limit):
            out.setdefault(identifier, _with_score(doc, 1.0))
    if len(out) >= limit or (out and filters.framework is not None):
        # Within a framework a code names a branch of it: that branch is the answer.
        return list(out.values())[:limit]
    words = query_words(query)
    search = Search(kind, words, filters.jurisdiction, filters.subject,
                    filters.statement_type, filters.grades_mask, filters.framework)  # fmt: skip
    pool = max(rank.POOL, limit)
    candidates = store.candidates(search) if mode != "lexical" and query.strip() else None
    # Embed the query on a helper thread while the full-text query runs here.
    vector = rank.query_vector_soon(query) if candidates is not None else None
    lexical = store.search(search, pool) if words and mode != "dense" else []
    dense = None
    if candidates is not None and vector is not None and vector.result() is not None:
        dense = rank.nearest(candidates, vector.result(), pool)
    if dense is None:  # no semantic index: lexical ranking alone
        for identifier, doc, relevance in lexical[:limit]:
            out.setdefault(identifier, _with_score(doc, round(rank.relevance_score(relevance), 4)))
    else:
        _fused(store, kind, lexical, dense, out, limit)
    return list(out.values())[:limit]


def _fused(
    store: Store,
    kind: str,
    lexical: list[tuple[str, bytes, float]],
    dense: list[tuple[str, float]],
    out: dict[str, bytes],
    limit: int,
) -> None:
    """Add the reciprocal-rank fusion of both rankings to `out`, up to `limit` records."""
    docs = {identifier: doc for identifier, doc, _ in lexical}
    for identifier, score in rank.fuse([i for i, _, _ in lexical], [i for i, _ in dense]):
        if len(out) >= limit:
            break
        if identifier in out:
            continue
        hit = docs.get(identifier)
        if hit is None:
            record = store.by_identifier(identifier, kind)
            if record is None:
                continue
            hit = record.doc
        out[identifier] = _with_score(hit, round(min(0.9999, score), 4))


def search_ranking(store: Store) -> str:
    """ "hybrid" or "lexical": what a search of the loaded version ranks by right now.

    A search's answer changes when `edukg index` completes, with the same content id, so
    this is part of its ETag.
    """
    # The model loads only where an index could use it (rank.available loads it).
    return "hybrid" if _indexed(store) and rank.available() else "lexical"


def _indexed(store: Store) -> bool:
    """Whether the loaded version has a complete semantic index."""
    return store.candidates(Search("-", ())) is not None


def search_mode(store: Store) -> dict[str, object]:
    """How searches of the loaded version are ranked, for /healthz."""
    indexed, model = _indexed(store), rank.available()
    if indexed and model:
        note = "Ranks by words (BM25) and by meaning (all-MiniLM-L6-v2), fused by rank."
    elif model:
        note = "Ranks by words only: the loaded version has no semantic index (edukg index)."
    else:
        note = (
            "Ranks by words only: the embedding model is not installed (pip install"
            f" 'edukg[index]' for ONNX Runtime, and {INSTALL_MODEL})."
        )
    return {
        "lexical": True,
        "semantic": indexed and model,
        "semanticIndex": indexed,
        "model": model,
        "note": note,
    }


def _code_hits(store: Store, kind: str, written: str, filters: Search, limit: int) -> list[Row]:
    """The records a code names as a person writes it (6.RP.3c is 6.RP.A.3.c:
    services.codes), with the search filters applied; within a framework, the items
    under the code too (3.NF.A: 3.NF.A and every 3.NF.A.*)."""
    within = Matching(kind, subject=filters.subject, jurisdiction=filters.jurisdiction,
                      statement_type=filters.statement_type, grades_mask=filters.grades_mask,
                      framework=filters.framework)  # fmt: skip
    found = resolve(store, written, within)
    if filters.framework is None:
        return list(found.rows[:limit])
    # A branch is named by its code, found or as written (3.NF, a domain no item bears).
    named = found.codes or (written.strip().upper(),)
    rows: dict[str, bytes] = {}
    for code in named:
        branch = replace(within, code=code.upper(), code_prefix=code.upper() + ".")
        rows.update(store.page(branch, None, limit))
    return sorted(rows.items())[:limit]


def search_standards(
    store: Store,
    query: str | None,
    code: str | None,
    filters: Search,
    limit: int,
    mode: str = "hybrid",
) -> list[bytes]:
    """Standards by words (ranked) or by code (score 1.0), filters first.

    `mode`: "hybrid" (the default), or "lexical" or "dense" alone (for evaluation).
    """
    _exclusive(query, code)
    if code is not None:
        return [
            _with_score(doc, 1.0) for _, doc in _code_hits(store, STANDARD, code, filters, limit)
        ]
    return _search(store, STANDARD, query or "", filters, codes=True, limit=limit, mode=mode)


def search_components(
    store: Store, query: str, subject: str | None, limit: int, mode: str = "hybrid"
) -> list[bytes]:
    """Learning components by words and meaning, ranked (`mode` as for standards)."""
    filters = Search(COMPONENT, (), subject=subject)
    return _search(store, COMPONENT, query, filters, False, limit, mode)


def search_skills(
    store: Store, query: str | None, code: str | None, statement_type: str | None, limit: int
) -> list[bytes]:
    """Durable skills by words (ranked) or by code (score 1.0)."""
    _exclusive(query, code)
    filters = Search(SKILL, (), statement_type=statement_type)
    if code is not None:
        return [_with_score(doc, 1.0) for _, doc in _code_hits(store, SKILL, code, filters, limit)]
    return _search(store, SKILL, query or "", filters, codes=True, limit=limit)
