"""services/hierarchy.py: ancestors, domains and the codes teachers know them by."""

from __future__ import annotations

from edukg.services import hierarchy
from edukg.services.hierarchy import Ancestry, Node


def _ancestry() -> Ancestry:
    # framework > grade 3 > NF domain > clusters A, B > standards; and a framework without
    # a Domain level: course > unit (above the cluster) > cluster > standard.
    parent = {"g3": "fw", "nf": "g3", "a": "nf", "b": "nf", "s1": "a", "s2": "b", "s3": "a",
              "course": "fw2", "unit": "course", "c": "unit", "s9": "c"}  # fmt: skip
    nodes = {
        "g3": Node("g3", None, "Grade 3", "Grade Level", None),
        "nf": Node("nf", None, "Number & Operations—Fractions", "Domain", None),
        "a": Node("a", "3.NF.A", "Develop understanding of fractions", "Cluster", None),
        "b": Node("b", "3.NF.B", "Solve problems", "Cluster", None),
        "course": Node("course", None, "Algebra I", "Course", None),
        "unit": Node("unit", None, "Linear equations", "Unit", None),
        "c": Node("c", "AI-A.C", "Create equations", "Cluster", None),
    }
    return Ancestry(parent, nodes)


def test_the_domain_is_the_domain_level_else_the_level_above_clusters() -> None:
    found = _ancestry()
    assert found.chain("s1") == ["a", "nf", "g3", "fw"]
    assert found.domain("s1") == found.domain("s2") == "nf"
    assert found.domain("s9") == "unit"
    assert [n.identifier for n in found.path("s9")] == ["course", "unit", "c"]


def test_a_domain_is_named_by_the_code_its_clusters_share() -> None:
    found = _ancestry()
    codes = hierarchy.domain_codes(found, {"s1": "3.NF.A.1", "s2": "3.NF.B.3", "s3": "3.NF.A.2",
                                           "s9": "AI-A.CED.1"})  # fmt: skip
    assert codes == {"nf": "3.NF", "unit": "AI-A"}
    assert hierarchy.shared_code(["K.G.A.1", "K.G.B.4"]) == "K.G"
    assert hierarchy.shared_code(["3.NF.A.1"]) == "3.NF.A"
    assert hierarchy.shared_code([None]) is None


def test_a_cycle_in_bad_data_ends() -> None:
    found = Ancestry({"x": "y", "y": "x"}, {})
    assert found.chain("x") == ["y"]
    assert found.domain("x") is None
