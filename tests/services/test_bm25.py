"""services/alignment/bm25.py: terms, BM25 over statements, and the words two texts share."""

from __future__ import annotations

from edukg.services.alignment import bm25


def test_terms_are_stemmed_words_and_numbers_without_common_words() -> None:
    assert bm25.terms("Adding fractions with unlike denominators within 100") == [
        "add", "fraction", "unlike", "denominator", "100"]  # fmt: skip
    assert bm25.stem("multiplying") == bm25.stem("multiplies") == "multiply"
    assert bm25.terms("The the THE") == []


def test_bm25_ranks_the_statement_that_shares_the_rarer_words_first() -> None:
    statements = [
        "Add and subtract fractions with unlike denominators.",
        "Add and subtract within 20.",
        "Compare two fractions with different numerators and different denominators.",
    ]
    index = bm25.index(statements)
    scores = index.scores("Students add fractions whose denominators differ.")
    assert scores.argmax() == 0
    assert scores[1] < scores[0] and scores[2] < scores[0]
    assert index.scores("nothing matches here").max() == 0.0
    for n in range(3):  # one text's score alone is the same figure
        assert abs(index.score_of("fractions with denominators", n)
                   - float(index.scores("fractions with denominators")[n])) < 1e-5  # fmt: skip


def test_shared_words_come_rarest_first_as_the_text_wrote_them() -> None:
    statements = ["Add fractions with unlike denominators.", "Add within 20.", "Add within 100."]
    index = bm25.index(statements)
    assert bm25.shared("We add fractions with denominators 4 and 6.", statements[0], index) == [
        "fractions", "denominators", "add"]  # fmt: skip
    assert bm25.shared("Nothing in common.", statements[0], index) == []


def test_a_plural_and_its_singular_share_a_stem() -> None:
    for one, many in (("shape", "shapes"), ("box", "boxes"), ("fraction", "fractions"),
                      ("class", "classes"), ("ratio", "ratios"), ("graph", "graphing")):  # fmt: skip
        assert bm25.stem(one) == bm25.stem(many), (one, many)
    assert bm25.stem("glass") == "glass"
