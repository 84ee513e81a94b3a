"""Search by meaning: the encoder, the index (resumable, cached across loads), hybrid
ranking on the demo graph and the lexical fallback, on both backends."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from edukg.cli import build_demo
from edukg.ingest.builder import build
from edukg.ingest.demo import demo_lines
from edukg.ingest.index import build_index, index
from edukg.model.embedding import DIMENSIONS, ROW_BYTES
from edukg.model.encoder import MAX_CHARS, MAX_TOKENS, Encoder, available
from edukg.model.vocabulary import STANDARD
from edukg.services import rank
from edukg.services import search as searching
from edukg.store import backend_of, is_postgres, open_store
from edukg.store.base import Candidates, Search
from edukg.store.sqlite_vectors import vectors_path
from harness.numpy_encoder import NumpyEncoder
from tests.conftest import Api

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.npy"


@pytest.fixture(scope="module")
def reference() -> NumpyEncoder:
    """The float32 model in NumPy: the oracle the product's int8 vectors are held to."""
    return NumpyEncoder()


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    """edukg's encoder (ONNX Runtime, int8), as a serving process runs it."""
    if not available():
        pytest.skip("ONNX Runtime is not installed (pip install 'edukg[index]')")
    return Encoder(threads=1)


def test_encoder_gives_unit_vectors_that_mean_something(reference: NumpyEncoder) -> None:
    encoder = reference
    texts = [
        "Add fractions with unlike denominators.",
        "adding two fractions whose denominators differ",
        "Determine the theme of a story.",
    ]
    v = encoder.encode(texts)
    assert v.shape == (3, DIMENSIONS) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.7 and v[0] @ v[2] < 0.2
    # Batching and padding do not change a text's vector.
    alone = encoder.encode([texts[2]])[0]
    assert float(alone @ v[2]) > 0.99999
    assert np.array_equal(encoder.encode(texts), v)


def test_encoder_matches_the_reference_model(reference: NumpyEncoder) -> None:
    """Vectors of sentence-transformers (torch) for the same texts, saved once."""
    encoder = reference
    reference = np.load(REFERENCE)
    texts = (Path(__file__).parent / "data" / "minilm_reference.txt").read_text().splitlines()
    cosines = (encoder.encode(texts) * reference).sum(axis=1)
    assert cosines.min() > 0.9999


def test_int8_index_encoder_agrees(encoder: Encoder, reference: NumpyEncoder) -> None:
    texts = (Path(__file__).parent / "data" / "minilm_reference.txt").read_text().splitlines()
    int8 = encoder.encode(texts)
    cosines = (int8 * reference.encode(texts)).sum(axis=1)
    assert cosines.mean() > 0.98 and cosines.min() > 0.95
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)


def test_int8_vectors_are_repeatable_and_near_alone_or_in_a_batch(encoder: Encoder) -> None:
    """int8 activations are scaled per batch: a text alone (a query) and in a batch (the
    index) differ by about 1% of a cosine; the same batch always gives the same vectors."""
    texts = [
        "Add fractions with unlike denominators.",
        "adding two fractions whose denominators differ",
        "Determine the theme of a story.",
    ]
    v = encoder.encode(texts)
    assert np.array_equal(encoder.encode(texts), v)
    assert v[0] @ v[1] > 0.7 and v[0] @ v[2] < 0.2
    alone = encoder.encode([texts[2]])[0]
    assert float(alone @ v[2]) > 0.98


def test_long_and_empty_texts(encoder: Encoder) -> None:
    v = encoder.encode(["word " * 2000, "", "分数 é"])
    assert np.isfinite(v).all() and v.shape == (3, DIMENSIONS)


def test_a_huge_record_costs_what_a_long_one_does(encoder: Encoder) -> None:
    """Texts are cut before tokenizing: 20 MB of text takes the memory of 26 KB."""
    start = "Add fractions with unlike denominators by finding equivalent fractions. "
    huge = start + "and more words " * 1_400_000
    # The tokenizer's memory is its own (Rust), so the process's peak is the measure:
    # uncut, this text took 2.9 GB (and 29 s) more.
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tokens = encoder.tokens([huge])
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(tokens[0]) == MAX_TOKENS
    assert grown_mb < 200, grown_mb
    assert np.allclose(encoder.encode([huge]), encoder.encode([huge[:MAX_CHARS]]))


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("figure out the lesson a fable teaches", "RL.3.2"),
        ("how many are in each share when dividing", "3.OA.A.2"),
        ("powers of ten and exponents in expressions", "6.EE.A.1"),
    ],
)
def test_clear_cut_meaning(demo: Api, query: str, first: str) -> None:
    rows = demo.ok("/academic-standards/search", query=query)
    assert rows[0]["statementCode"] == first, [r["statementCode"] for r in rows]
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)


def test_components_by_meaning(demo: Api) -> None:
    rows = demo.ok("/learning-components/search", query="cut a shape into equal pieces")
    assert rows[0]["description"] == "Partition a shape into equal parts"


def test_unrelated_words_find_nothing(demo: Api) -> None:
    assert demo.ok("/academic-standards/search", query="photosynthesis in plant cells") == []


def test_filters_still_come_first(demo: Api) -> None:
    rows = demo.ok("/academic-standards/search", query="sharing equally", gradeLevel="5", limit=50)
    assert rows and all("5" in r["gradeLevel"] for r in rows)
    vt = demo.ok("/academic-standards/search", query="sharing equally", jurisdiction="Vermont")
    assert vt and all(r["jurisdiction"] == "Vermont" for r in vt)


def test_health_says_hybrid(demo: Api) -> None:
    details = demo.http.get("/healthz", headers={"x-api-key": demo.key}).json()["details"]["search"]
    assert details["lexical"] is True and details["semantic"] is True


def test_without_an_index_search_is_lexical(sample: Api) -> None:
    details = sample.http.get("/healthz", headers={"x-api-key": sample.key}).json()["details"][
        "search"
    ]
    assert details["semantic"] is False and details["semanticIndex"] is False
    assert "edukg index" in details["note"]
    rows = sample.ok("/academic-standards/search", query="denominators", limit=10)
    assert rows and all("denominator" in r["description"].lower() for r in rows)


def test_fusion_is_deterministic() -> None:
    fused = rank.fuse(["b", "a", "c"], ["a", "b", "d"])
    assert [i for i, _ in fused] == ["a", "b", "c", "d"]  # a and b tie: by identifier
    assert fused[0][1] == fused[1][1] < 1.0
    assert rank.fuse(["x"], ["x"]) == [("x", 1.0)]
    vectors = np.eye(3, DIMENSIONS, dtype=np.float32)
    near = rank.nearest(Candidates(["p", "q", "r"], vectors), np.eye(1, DIMENSIONS)[0], 2)
    assert near == [("p", 1.0)]  # q and r are orthogonal: below the similarity floor


def _vectors(db: str) -> bytes:
    store = open_store(db, refresh=0)
    info = store.info()
    assert info is not None
    found = store.candidates(Search(STANDARD, ()))
    store.close()
    assert found is not None
    return bytes(np.ascontiguousarray(found.vectors).tobytes())


def test_index_resumes_and_reuses_the_cache(fresh_db: str) -> None:
    build_demo(fresh_db)
    indexer = backend_of(fresh_db).indexer()
    assert indexer is not None

    class Stop(Exception):
        pass

    def stop_after_two_batches(done: int, total: int) -> None:
        if done >= 80:
            raise Stop

    with pytest.raises(Stop):
        build_index(indexer, stop_after_two_batches, workers=1, batch=40)
    indexer.close()
    store = open_store(fresh_db, refresh=0)
    store.info()
    assert store.candidates(Search(STANDARD, ())) is None  # incomplete: not used
    store.close()
    if not is_postgres(fresh_db):  # a torn last row, as a kill mid-write leaves it
        info_id = _content_id(fresh_db)
        partial = vectors_path(fresh_db, info_id).with_name(
            vectors_path(fresh_db, info_id).name + ".partial"
        )
        with open(partial, "ab") as f:
            f.write(b"\x00" * 100)
    resumed = index(fresh_db, workers=1)
    assert resumed.resumed_at == 80 and resumed.embedded < resumed.rows - 80 + 1
    assert resumed.rows > 100
    first = _vectors(fresh_db)
    # A new version with one changed text embeds only that text.
    lines = [
        line.replace(b"Partition a shape into equal parts", b"Split a shape into equal parts")
        for line in demo_lines()
    ]
    build([("changed demo", enumerate(lines, start=1))], fresh_db, "changed")
    again = index(fresh_db, workers=1)
    assert again.embedded == 1 and again.from_cache == again.rows - 1
    assert len(_vectors(fresh_db)) == len(first)
    assert index(fresh_db).already_complete


def _content_id(db: str) -> str:
    store = open_store(db, refresh=0)
    info = store.info()
    store.close()
    assert info is not None
    return info.content_id


def test_vector_files_follow_their_versions(tmp_path: Path) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    index(db, workers=1)
    first = vectors_path(db, _content_id(db))
    assert first.stat().st_size % ROW_BYTES == 0 and first.stat().st_size > 0
    lines = [line.replace(b"unit fraction", b"unit-fraction") for line in demo_lines()]
    build([("v2", enumerate(lines, start=1))], db, "v2")
    assert first.exists()  # the previous version's vectors stay (readers may hold it)
    index(db, workers=1)
    build([("v3", enumerate(demo_lines(), start=1))], db, "v3")
    names = sorted(p.name for p in tmp_path.glob("edukg.db.*.vectors*"))
    assert len(names) <= 2, names
    assert os.path.exists(tmp_path / "edukg.db.embeddings")


def test_modes_for_evaluation(demo_db: str) -> None:
    store = open_store(demo_db, refresh=0)
    store.info()
    filters = Search(STANDARD, (), jurisdiction="Multi-State")
    query = "figure out the lesson a fable teaches"
    lexical = searching.search_standards(store, query, None, filters, 5, mode="lexical")
    hybrid = searching.search_standards(store, query, None, filters, 5, mode="hybrid")
    dense = searching.search_standards(store, query, None, filters, 5, mode="dense")
    store.close()
    assert dense and hybrid and lexical != hybrid


def test_search_etag_changes_when_the_index_completes(
    tmp_path: Path, serve: Callable[[str], Api]
) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)  # no index yet: lexical
    api = serve(db)
    path = "/academic-standards/search"
    before = api.get(path, query="figure out the lesson a fable teaches")
    framework = api.get("/standards-frameworks")
    index(db, workers=1)
    after = api.get(path, query="figure out the lesson a fable teaches")
    assert before.headers["etag"] != after.headers["etag"]
    assert before.json() != after.json()
    assert api.get("/standards-frameworks").headers["etag"] == framework.headers["etag"]
