"""A synthetic export at the real one's scale, for benchmarks.

`edukg generate OUTDIR --scale full --seed N` writes nodes.jsonl and
relationships.jsonl with the record counts of export v1.11.0, its mix of labels,
its property shapes and string encodings (lists and booleans as JSON-encoded
strings, crosswalk figures as strings), realistic text lengths and a hierarchy
framework > domain > cluster > standard > sub-standard. The same seed gives the
same bytes. The texts are random words: this is load, not meaning.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

# Counts of export v1.11.0.
FULL_NODES = {
    "StandardsFrameworkItem": 222_865,
    "LearningComponent": 8_686,
    "Activity": 8_173,
    "Assessment": 4_516,
    "Lesson": 2_550,
    "LessonGrouping": 764,
    "StandardsFramework": 214,
    "Course": 18,
}
FULL_RELATIONSHIPS = {
    "hasChild": 223_462,
    "supports": 137_380,
    "hasEducationalAlignment": 52_807,
    "hasStandardAlignment": 25_113,
    "hasPart": 15_944,
    "buildsTowards": 757,
    "hasReference": 472,
    "relatesTo": 284,
    "hasDependency": 209,
    "mutuallyExclusiveWith": 192,
}
_STATES = ("Alabama", "Arizona", "California", "Colorado", "Florida", "Georgia", "Illinois",
           "Indiana", "Kansas", "Kentucky", "Maryland", "Michigan", "Nevada", "New York", "Ohio",
           "Oregon", "Texas", "Utah", "Vermont", "Virginia", "Washington", "Wisconsin")  # fmt: skip
_SUBJECTS = ("Mathematics", "English Language Arts", "Science", "Social Studies")
_GRADES = ("K", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12")
_WORDS = (
    "analyze", "apply", "compare", "construct", "describe", "determine", "explain", "identify",
    "interpret", "model", "represent", "solve", "use", "evaluate", "develop", "fractions",
    "equations", "number", "line", "data", "text", "evidence", "argument", "structure",
    "function", "ratio", "rate", "area", "volume", "angle", "reasoning", "strategies", "story",
    "characters", "theme", "claim", "energy", "matter", "ecosystem", "history", "source",
    "government", "map", "pattern", "relationship", "expression", "whole", "place", "value",
    "digit", "measurement", "graph", "probability", "statistics", "context", "problem",
    "real-world", "grade-level", "appropriate", "multiple", "including", "between", "within",
)  # fmt: skip
_LICENSE = "https://creativecommons.org/licenses/by/4.0/"
_ATTRIBUTION = (
    "Knowledge Graph is provided by Learning Commons under the CC BY-4.0 license. {} standards "
    "provided by {} Department of Education available at https://example.org/standards.pdf."
)
_EDGE_TEXT = {
    "hasChild": "A hasChild relationship indicates that one entity serves as the parent of another, "
    "representing a hierarchical connection in which the target entity is a direct child of the "
    "source entity",
    "supports": "A supports relationship indicates that the source learning component is a "
    "granular skill or concept that supports attainment of the target standard.",
    "hasStandardAlignment": "A hasStandardAlignment relationship connects a State standard to a "
    "CCSS standard when the two are supported by overlapping sets of Learning Components. It "
    "does not imply sequence, dependency, or pedagogical progression.",
}


def _scaled(counts: dict[str, int], scale: float) -> dict[str, int]:
    return {k: max(1, round(v * scale)) for k, v in counts.items()}


_SYLLABLES = ("ba", "ce", "di", "fo", "gu", "ka", "le", "mi", "no", "pu", "ra", "se", "ti",
              "vo", "za", "tion", "ment", "ing", "er", "al")  # fmt: skip


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[bytes] = []
        # A vocabulary of a few thousand words with Zipf-like frequencies, as real text has:
        # common words everywhere, most words in few records.
        made = {"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))) for _ in range(4000)} - set(
            _WORDS
        )
        self.vocabulary = list(_WORDS) + sorted(made)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.vocabulary))]

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def text(self, low: int, high: int) -> str:
        words = self.rng.choices(self.vocabulary, self.weights, k=self.rng.randint(low, high))
        return " ".join(words).capitalize() + "."


def generate(scale: float = 1.0, seed: int = 0) -> tuple[Iterator[bytes], Iterator[bytes]]:
    """(node lines, relationship lines) of a synthetic export; `scale` 1.0 is full size."""
    nodes_out: list[bytes] = []
    rels_out: list[bytes] = []
    _build(scale, seed, nodes_out, rels_out)
    return iter(nodes_out), iter(rels_out)


def write(outdir: Path, scale: float = 1.0, seed: int = 0) -> dict[str, int]:
    """Write nodes.jsonl and relationships.jsonl into `outdir`; return line counts."""
    outdir.mkdir(parents=True, exist_ok=True)
    nodes, rels = generate(scale, seed)
    counts = {}
    for name, lines in (("nodes.jsonl", nodes), ("relationships.jsonl", rels)):
        n = 0
        with open(outdir / name, "wb") as f:
            for line in lines:
                f.write(line)
                f.write(b"\n")
                n += 1
        counts[name] = n
    return counts


def _build(scale: float, seed: int, nodes: list[bytes], rels: list[bytes]) -> None:
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    w = _Writer(rng)
    want_nodes = _scaled(FULL_NODES, scale)
    want_rels = _scaled(FULL_RELATIONSHIPS, scale)

    def node(label: str, identifier: str, props: dict[str, Any]) -> None:
        nodes.append(orjson.dumps({"type": "node", "identifier": identifier, "labels": [label],
                                   "properties": {"identifier": identifier, **props}}))  # fmt: skip

    def rel(label: str, source: tuple[str, str], target: tuple[str, str], **props: Any) -> None:
        identifier = w.uid()
        body = {"relationshipType": label, "identifier": identifier, "license": _LICENSE,
                "provider": "Learning Commons", "author": "Learning Commons",
                "description": _EDGE_TEXT.get(label, f"A {label} relationship."),
                "attributionStatement": "Knowledge Graph is provided by Learning Commons under "
                "the CC BY-4.0 license.", "sourceEntity": source[1], "targetEntity": target[1],
                "sourceEntityKey": "identifier", "targetEntityKey": "caseIdentifierUUID",
                "dateModified": "2025-03-27", **props}  # fmt: skip
        rels.append(orjson.dumps({"type": "relationship", "identifier": identifier, "label": label,
                                  "properties": body, "source_identifier": source[0],
                                  "source_labels": [source[1]], "target_identifier": target[0],
                                  "target_labels": [target[1]]}))  # fmt: skip

    # Frameworks and their items: framework > domain > cluster > standard > sub-standard.
    frameworks = want_nodes["StandardsFramework"]
    per_framework = max(1, want_nodes["StandardsFrameworkItem"] // frameworks)
    items: list[tuple[str, str, str, list[str]]] = []  # identifier, jurisdiction, subject, grades
    item_budget = want_nodes["StandardsFrameworkItem"]
    child_edges = 0
    for f in range(frameworks):
        jurisdiction = "Multi-State" if f % 10 == 0 else rng.choice(_STATES)
        subject = _SUBJECTS[f % len(_SUBJECTS)]
        fid, case = w.uid(), w.uid()
        attribution = _ATTRIBUTION.format(subject, jurisdiction)
        node("StandardsFramework", fid, {
            "jurisdiction": jurisdiction, "academicSubject": subject, "license": _LICENSE,
            "attributionStatement": attribution, "adoptionStatus": "Implemented",
            "dateModified": "2025-02-11", "isCurrent": "true" if f % 17 else "false",
            "provider": "Learning Commons", "inLanguage": "en-US", "caseIdentifierUUID": case,
            "author": f"{jurisdiction} Department of Education",
            "caseIdentifierURI": f"https://satchelcommons.com/ims/case/v1p0/CFDocuments/{case}",
            "name": f"{jurisdiction} {subject} Standards ({f})",
        })  # fmt: skip
        remaining = per_framework if f < frameworks - 1 else item_budget
        item_budget -= remaining
        level: list[tuple[str, str, str, str | None]] = [(fid, "StandardsFramework", "", None)]
        made = 0
        depth_types = (("Domain", "Standard Grouping"), ("Cluster", "Standard Grouping"),
                       ("Standard", "Standard"), ("Component", "Standard"))  # fmt: skip
        depth = 0
        while made < remaining:
            parents = level
            level = []
            kind = depth_types[min(depth, 3)]
            for parent_id, parent_label, parent_code, parent_grade in parents:
                fanout = (
                    rng.randint(3, 8),
                    rng.randint(3, 6),
                    rng.randint(4, 10),
                    rng.randint(0, 4),
                )[depth]
                if depth >= 3 and made + fanout > remaining:
                    fanout = remaining - made
                for n in range(fanout):
                    if made >= remaining:
                        break
                    grade = parent_grade or rng.choice(_GRADES)
                    code = (
                        f"{parent_code}.{n + 1}" if parent_code else f"{grade}.{chr(65 + n)}{f % 9}"
                    )
                    iid, icase = w.uid(), w.uid()
                    grades = [grade] if rng.random() > 0.1 else list(_GRADES[9:])
                    node("StandardsFrameworkItem", iid, {
                        "jurisdiction": jurisdiction, "license": _LICENSE,
                        "gradeLevel": orjson.dumps(grades).decode(),
                        "attributionStatement": attribution, "adoptionStatus": "Adopted",
                        "normalizedStatementType": kind[1],
                        "description": w.text(6, 40) if depth >= 2 else w.text(3, 8),
                        "dateModified": "2025-03-27", "statementCode": code, "isCurrent": "true",
                        "provider": "Learning Commons", "inLanguage": "en-US",
                        "caseIdentifierUUID": icase, "author": f"{jurisdiction} Department of Education",
                        "academicSubject": subject, "statementType": kind[0],
                        "caseIdentifierURI": f"https://satchelcommons.com/ims/case/v1p0/CFItems/{icase}",
                    })  # fmt: skip
                    rel("hasChild", (parent_id, parent_label), (iid, "StandardsFrameworkItem"))
                    child_edges += 1
                    items.append((iid, jurisdiction, subject, grades))
                    level.append((iid, "StandardsFrameworkItem", code, grade))
                    made += 1
            depth += 1
            if not level or depth > 3:  # five levels deep at most: start more domains
                level = [(fid, "StandardsFramework", "", None)]
                depth = 0
    std = [i[0] for i in items]
    for _ in range(max(0, want_rels["hasChild"] - child_edges)):  # a few items with two parents
        a, b = rng.sample(std, 2)
        rel("hasChild", (a, "StandardsFrameworkItem"), (b, "StandardsFrameworkItem"))

    # Learning components supporting standards.
    lcs = [w.uid() for _ in range(want_nodes["LearningComponent"])]
    for lc in lcs:
        node("LearningComponent", lc, {
            "description": w.text(5, 14), "examples": orjson.dumps([w.text(8, 20)]).decode(),
            "academicSubject": rng.choice(_SUBJECTS), "author": "Achievement Network",
            "provider": "Learning Commons", "license": _LICENSE, "inLanguage": "en-US",
            "attributionStatement": "Knowledge Graph is provided by Learning Commons under the "
            "CC BY-4.0 license. Learning Commons received learning components under CC BY-4.0 "
            "from Achievement Network.", "dateCreated": "2025-04-01", "dateModified": "2025-04-01",
        })  # fmt: skip
    for _ in range(want_rels["supports"]):
        rel(
            "supports",
            (rng.choice(lcs), "LearningComponent"),
            (rng.choice(std), "StandardsFrameworkItem"),
        )
    for _ in range(want_rels["hasStandardAlignment"]):
        shared = rng.randint(1, 5)
        state, ccss = shared + rng.randint(0, 3), shared + rng.randint(0, 3)
        rel("hasStandardAlignment", (rng.choice(std), "StandardsFrameworkItem"),
            (rng.choice(std), "StandardsFrameworkItem"), jaccard=f"{shared / (state + ccss - shared):.4f}",
            stateLCCount=str(state), ccssLCCount=str(ccss), sharedLCCount=str(shared),
            dateCreated="2026-07-09")  # fmt: skip
    for label in ("buildsTowards", "relatesTo"):
        for _ in range(want_rels[label]):
            a, b = rng.sample(std, 2)
            rel(label, (a, "StandardsFrameworkItem"), (b, "StandardsFrameworkItem"))

    # Curriculum: courses > units > lessons > activities; assessments; alignments.
    common = {"author": "Illustrative Mathematics", "license": _LICENSE, "inLanguage": "en-US",
              "academicSubject": "Mathematics", "educationalUse": "instruction",
              "audience": '["Teacher","Student","Family"]', "isOptional": "false",
              "attributionStatement": "Knowledge Graph is provided by Learning Commons under the "
              "CC BY-4.0 license. Learning Commons received the scope and sequence of a "
              "curriculum under CC BY-4.0."}  # fmt: skip

    def curriculum(label: str, count: int, extra: dict[str, Any]) -> list[str]:
        made = []
        for n in range(count):
            identifier = f"im:{w.uid()}"
            grade = rng.choice(_GRADES)
            node(label, identifier, {**common, "name": w.text(2, 6)[:-1], "courseCode": f"im360:{grade}",
                                     "curriculumLabel": extra.get("curriculumLabel", label),
                                     "ordinalName": f"{extra.get('ordinal', label)} {n % 20 + 1}",
                                     "gradeLevel": orjson.dumps([grade]).decode()})  # fmt: skip
            made.append(identifier)
        return made

    courses = curriculum("Course", want_nodes["Course"], {"curriculumLabel": "Course"})
    groupings = curriculum(
        "LessonGrouping",
        want_nodes["LessonGrouping"],
        {"curriculumLabel": "Unit", "ordinal": "Unit"},
    )
    lessons = curriculum("Lesson", want_nodes["Lesson"], {"ordinal": "Lesson"})
    activities = curriculum(
        "Activity", want_nodes["Activity"], {"curriculumLabel": "Activity", "ordinal": "Activity"}
    )
    assessments = curriculum(
        "Assessment",
        want_nodes["Assessment"],
        {"curriculumLabel": "Practice Problems", "ordinal": "Assessment"},
    )
    parts = [(rng.choice(courses), "Course", g, "LessonGrouping") for g in groupings]
    parts += [(rng.choice(groupings), "LessonGrouping", x, "Lesson") for x in lessons]
    parts += [(rng.choice(lessons), "Lesson", x, "Activity") for x in activities]
    parts += [(rng.choice(lessons), "Lesson", x, "Assessment") for x in assessments]
    for source, s_label, target, t_label in parts[: want_rels["hasPart"]]:
        rel("hasPart", (source, s_label), (target, t_label))
    content = [(x, "Lesson") for x in lessons] + [(x, "Activity") for x in activities] + [
        (x, "Assessment") for x in assessments]  # fmt: skip
    kinds = ("addressing", "building_toward", "building_on", "practicing")
    for _ in range(want_rels["hasEducationalAlignment"]):
        rel("hasEducationalAlignment", rng.choice(content), (rng.choice(std), "StandardsFrameworkItem"),
            curriculumAlignmentType=orjson.dumps([rng.choice(kinds)]).decode())  # fmt: skip
    for label, pool, pool_label in (("hasDependency", groupings, "LessonGrouping"),
                                    ("mutuallyExclusiveWith", assessments, "Assessment"),
                                    ("hasReference", assessments, "Assessment")):  # fmt: skip
        for _ in range(want_rels[label]):
            a, b = rng.sample(pool, 2)
            rel(label, (a, pool_label), (b, pool_label))
