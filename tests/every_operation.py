"""Every operation of the API with demo values that find records: what the backend
comparison and the answers-unchanged check both ask."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid, demo_node_id, demo_skill_id

MS = demo_framework_case_uuid("ms-math")
VT = demo_framework_case_uuid("vt-math")
STD = demo_case_uuid("ms-math", "4.NF.A.1")
SKILLS = demo_skill_id("skills")
# Every operation of the API, with demo values that find records. `{component}` is
# filled from the data (learning component identifiers are the loader's own).
REQUESTS = [
    ("/standards-frameworks", {"includeNonCurrent": "true"}),
    ("/academic-standards", {"standardsFrameworkCaseIdentifierUUID": MS, "limit": "7"}),
    ("/academic-standards", {"standardsFrameworkCaseIdentifierUUID": MS, "gradeLevel": "4"}),
    (f"/academic-standards/{STD}", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '3.NF.A')}/children", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '4.NF.B.3.a')}/prerequisites", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.1')}/builds-towards", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.2')}/related-standards", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '4.NF.A.2')}/crosswalks", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.1')}/learning-components", {}),
    (f"/academic-standards/{demo_case_uuid('ms-math', '4.NF.B.3.a')}/ancestors", {}),
    (f"/academic-standards/{STD}/lessons", {}),
    (f"/academic-standards/{STD}/activities", {}),
    (f"/academic-standards/{STD}/assessments", {}),
    ("/academic-standards/search", {"statementCode": "3.NF.A.1"}),
    ("/durable-skills/search", {"statementCode": "COL.1"}),
    ("/learning-components", {"academicSubject": "Mathematics", "limit": "5"}),
    ("/learning-components/{component}", {}),
    ("/courses", {"curriculumId": "demo"}),
    (f"/courses/{demo_node_id('course')}/scope-and-sequence", {"view": "full"}),
    (f"/lesson-groupings/{demo_node_id('unit1')}", {}),
    (f"/lessons/{demo_node_id('lesson3')}", {}),
    (f"/lessons/{demo_node_id('lesson3')}/activities", {"limit": "2"}),
    (f"/lessons/{demo_node_id('lesson3')}/standards", {}),
    (f"/activities/{demo_node_id('lesson3-activity1')}/standards", {}),
    (f"/assessments/{demo_node_id('lesson3-practice')}/standards", {}),
    ("/assessments", {"courseId": demo_node_id("course")}),
    ("/curriculums/demo/dependency-map", {}),
    ("/durable-skills-frameworks", {}),
    ("/durable-skills", {"frameworkIdentifier": SKILLS, "limit": "4"}),
    (f"/durable-skills/{demo_skill_id('COL')}", {}),
    (f"/durable-skills/{demo_skill_id('COL')}/children", {}),
    ("/academic-standards/00000000-0000-4000-8000-000000000000", {}),
    ("/changes", {"from": "demo", "to": "demo"}),
    ("/changes/summary", {"from": "demo", "to": "demo"}),
    (
        f"/academic-standards/{demo_case_uuid('vt-math', 'M.3.NF.1')}/crosswalks",
        {"includeDerived": "true"},
    ),
    (
        "/framework-crosswalks",
        {"sourceFrameworkCaseIdentifierUUID": VT, "targetFrameworkCaseIdentifierUUID": MS},
    ),
    (
        "/framework-crosswalks/summary",
        {"sourceFrameworkCaseIdentifierUUID": VT, "targetFrameworkCaseIdentifierUUID": MS},
    ),
    ("/curriculums/demo/coverage", {"standardsFrameworkCaseIdentifierUUID": VT}),
    ("/curriculums/demo/coverage/summary", {"standardsFrameworkCaseIdentifierUUID": VT}),
]
# Ranked by words, each backend's own full-text ranking (BM25 against ts_rank_cd): the
# one documented difference (docs/deployment.md). Compared by status and shape.
RANKED = [("/learning-components/search", {"query": "fractions"})]
# Each database's own load time: compared with it set aside.
LOAD_TIMED: list[tuple[str, dict[str, str]]] = [("/data-versions", {})]
# Ranked by meaning over the same vectors: the same standards in the same order.
BY_MEANING: list[tuple[str, dict[str, Any]]] = [
    (f"/academic-standards/{STD}/similar", {"jurisdiction": "Vermont"}),
    ("/alignments", {"text": "Add fractions. Tell time to the minute.", "jurisdiction": "Vermont"}),
    ("/alignments/check", {"text": "Add fractions. Tell time to the minute.",
                           "caseIdentifierUUID": STD}),
]  # fmt: skip


def unsigned(body: bytes) -> bytes:
    """A body with its cursor's signature taken out (what is left is byte for byte)."""
    decoded = orjson.loads(body)
    cursor = decoded.get("pagination", {}).get("nextCursor") if isinstance(decoded, dict) else None
    if not cursor:
        return body
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    return body.replace(cursor.encode(), base64.urlsafe_b64encode(raw[16:]))
