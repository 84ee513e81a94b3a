"""services/codes.py: standard codes as people write them, found in the real sample and,
for the cases the sample lacks, in a small export written here."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import orjson
import pytest

from edukg.ingest.builder import load
from edukg.model.errors import NotFoundError
from edukg.model.vocabulary import STANDARD
from edukg.services.codes import find_standard_by_code, forms_of, resolve
from edukg.store import is_postgres, open_store
from edukg.store.base import Matching, Store
from edukg.store.shared import page_sql
from harness.exports import write_export


def test_a_written_code_is_read_into_the_forms_the_data_writes() -> None:
    assert forms_of("6.RP.3c") == {
        "6.RP.3C": 0, "6.RP.3.C": 1, **{f"6.RP.{x}.3.C": 2 for x in "ABCDEFGH"},
    }  # fmt: skip
    assert forms_of("CCSS.MATH.CONTENT.6.RP.A.3.C")["6.RP.A.3.C"] == 1
    assert forms_of("CCSS.Math.Practice.MP1")["MP1"] == 1
    assert {"HSA-REI.D.11": 1, "HSA.REI.D.11": 1}.items() <= forms_of("a-rei.d.11").items()
    assert forms_of("HS A-REI 11")["HSA-REI.D.11"] == 2
    assert forms_of("F.IF.4")["HSF-IF.B.4"] == 2
    assert forms_of(" 6 rp a 3 c ") == {"6 RP A 3 C": 0, "6.RP.A.3.C": 1}
    # Words, a grade's practice, an over-long text: nothing but the literal to look up.
    assert forms_of("fractions") == {"FRACTIONS": 0}
    assert forms_of("6.MP3") == {"6.MP3": 0}
    assert forms_of("x" * 60 + "1") == {"X" * 60 + "1": 0}
    assert forms_of("   ") == {}


@pytest.fixture
def sample_store(sample_db: str) -> Iterator[Store]:
    store = open_store(sample_db, refresh=0)
    yield store
    store.close()


@pytest.mark.parametrize(
    ("written", "jurisdiction", "real"),
    [
        ("6.RP.3c", "Multi-State", "6.RP.A.3.c"),
        ("6.RP.3.c", "California", "6.RP.A.3.c"),  # California publishes no alternate codes
        ("6.RP.A.3c", "Multi-State", "6.RP.A.3.c"),
        ("6.rp.a.3.c", "California", "6.RP.A.3.c"),
        ("6 RP 3 c", "California", "6.RP.A.3.c"),
        ("CCSS.MATH.CONTENT.6.RP.A.3.C", "Multi-State", "6.RP.A.3.c"),
        ("A-REI.D.11", "Multi-State", "HSA-REI.D.11"),
        ("A-REI.11", "California", "HSA-REI.D.11"),
        ("F.IF.4", "Multi-State", "HSF-IF.B.4"),
        ("f-if.7e", "California", "HSF-IF.C.7.e"),
        ("HSF-LE.A.4.1", "California", "HSF.LE.A.4.1"),  # California's own spelling
        ("G.GMD.6", "California", "HSG.GMD.6"),
        ("2.NBT.7.1", "California", "2.NBT.7.1"),  # a California code without a cluster
        ("MP3", "Multi-State", "MP3"),
        ("3.NF.A.1", "Multi-State", "3.NF.A.1"),
    ],
)
def test_the_common_forms_name_the_standard(
    sample_store: Store, written: str, jurisdiction: str, real: str
) -> None:
    found = resolve(sample_store, written, Matching(STANDARD, jurisdiction=jurisdiction))
    assert found.codes == (real,) and found.rows and not found.several
    assert {orjson.loads(doc)["statementCode"] for _, doc in found.rows} == {real}
    row = find_standard_by_code(sample_store, written, jurisdiction)
    assert row is not None and row == min(found.rows)  # a code a course repeats: one standard


def test_every_jurisdiction_s_standard_of_the_code(sample_store: Store) -> None:
    """Without a jurisdiction, 6.RP.3c is 6.RP.A.3.c wherever it is: Multi-State's by its
    alternate code, California's by its parts."""
    found = resolve(sample_store, "6.RP.3c", Matching(STANDARD))
    places = sorted(orjson.loads(doc)["jurisdiction"] for _, doc in found.rows)
    assert found.codes == ("6.RP.A.3.c",) and places == ["California", "Multi-State"]


def test_the_forms_are_looked_up_by_the_code_indexes(sample_db: str) -> None:
    """Ten forms of 6.RP.3c read by the code indexes, not by walking every standard."""
    if is_postgres(sample_db):
        pytest.skip("SQLite's plan (PostgreSQL's planner weighs its own statistics)")
    forms = Matching(STANDARD, codes=tuple(forms_of("6.RP.3c")), jurisdiction="Multi-State")
    sql, params = page_sql(forms, "", 500)
    with closing(sqlite3.connect(sample_db)) as db:
        plan = " ".join(str(row[3]) for row in db.execute("EXPLAIN QUERY PLAN " + sql, params))
    assert "docs_by_code" in plan and "docs_by_alt_code" in plan
    assert "docs_of_kind" not in plan, plan


def test_nothing_fits(sample_store: Store) -> None:
    for written in ("6.RP.9", "HS.MP2", "fractions", "", "6.RP.3c.x.y.z.w.v.u"):
        assert find_standard_by_code(sample_store, written, "California") is None, written


def _item(n: int, code: str, alternate: str | None = None) -> bytes:
    props = {"identifier": f"00000000-0000-4000-8000-{n:012d}", "statementCode": code,
             "caseIdentifierUUID": f"10000000-0000-4000-8000-{n:012d}", "jurisdiction": "Here",
             "academicSubject": "Mathematics", "normalizedStatementType": "Standard",
             "description": f"standard {code}", "gradeLevel": ["9"]}  # fmt: skip
    if alternate:
        props["alternateStatementCode"] = alternate
    return orjson.dumps({"type": "node", "identifier": props["identifier"],
                         "labels": ["StandardsFrameworkItem"], "properties": props})  # fmt: skip


def test_a_code_without_its_cluster_must_fit_one_standard(tmp_path: Path) -> None:
    lines = [_item(1, "9.XY.A.1"), _item(2, "9.XY.B.1"), _item(3, "9.XY.A.2"),
             _item(4, "9.ZW.A.5", alternate="9.ZW.5"), _item(5, "9.ZW.B.5")]  # fmt: skip
    db = str(tmp_path / "codes.db")
    load([str(write_export(tmp_path / "export", lines))], db)
    store = open_store(db, refresh=0)
    try:
        here = Matching(STANDARD, jurisdiction="Here")
        assert resolve(store, "9.XY.1", here).several == ("9.XY.A.1", "9.XY.B.1")
        assert resolve(store, "9.XY.1", here).rows == ()
        with pytest.raises(NotFoundError, match=r"9\.XY\.A\.1, 9\.XY\.B\.1\. Give the whole"):
            find_standard_by_code(store, "9.xy.1", "Here")
        assert resolve(store, "9.XY.2", here).codes == ("9.XY.A.2",)  # one fits
        assert resolve(store, "9.xy.b.1", here).codes == ("9.XY.B.1",)  # the whole code
        # A published alternate code is the jurisdiction's own word: it is not a guess.
        assert resolve(store, "9.ZW.5", here).codes == ("9.ZW.A.5",)
    finally:
        store.close()
