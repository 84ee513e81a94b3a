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
    b = _Builder(scale, seed, nodes, rels)
    b.frameworks()
    b.components_and_links()
    b.curriculum()


_DEPTH_TYPES = (("Domain", "Standard Grouping"), ("Cluster", "Standard Grouping"),
                ("Standard", "Standard"), ("Component", "Standard"))  # fmt: skip
_CURRICULUM_COMMON = {
    "author": "Illustrative Mathematics", "license": _LICENSE, "inLanguage": "en-US",
    "academicSubject": "Mathematics", "educationalUse": "instruction",
    "audience": '["Teacher","Student","Family"]', "isOptional": "false",
    "attributionStatement": "Knowledge Graph is provided by Learning Commons under the "
    "CC BY-4.0 license. Learning Commons received the scope and sequence of a "
    "curriculum under CC BY-4.0.",
}  # fmt: skip
_Level = list[tuple[str, str, str, str | None]]  # identifier, label, code, grade


class _Builder:
    """One synthetic export, drawn from one seeded generator in a fixed order."""

    def __init__(self, scale: float, seed: int, nodes: list[bytes], rels: list[bytes]) -> None:
        self.rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
        self.w = _Writer(self.rng)
        self.want_nodes = _scaled(FULL_NODES, scale)
        self.want_rels = _scaled(FULL_RELATIONSHIPS, scale)
        self.nodes, self.rels = nodes, rels
        self.items: list[tuple[str, str, str, list[str]]] = []  # id, jurisdiction, subject, grades
        # id, framework, subject, grades, whether a Standard (not a grouping)
        self.items_more: list[tuple[str, str, str, list[str], bool]] = []
        self.child_edges = 0

    def node(self, label: str, identifier: str, props: dict[str, Any]) -> None:
        self.nodes.append(orjson.dumps({"type": "node", "identifier": identifier, "labels": [label],
                                        "properties": {"identifier": identifier, **props}}))  # fmt: skip

    def rel(
        self, label: str, source: tuple[str, str], target: tuple[str, str], **props: Any
    ) -> None:
        identifier = self.w.uid()
        body = {"relationshipType": label, "identifier": identifier, "license": _LICENSE,
                "provider": "Learning Commons", "author": "Learning Commons",
                "description": _EDGE_TEXT.get(label, f"A {label} relationship."),
                "attributionStatement": "Knowledge Graph is provided by Learning Commons under "
                "the CC BY-4.0 license.", "sourceEntity": source[1], "targetEntity": target[1],
                "sourceEntityKey": "identifier", "targetEntityKey": "caseIdentifierUUID",
                "dateModified": "2025-03-27", **props}  # fmt: skip
        self.rels.append(orjson.dumps({"type": "relationship", "identifier": identifier,
                                       "label": label, "properties": body,
                                       "source_identifier": source[0], "source_labels": [source[1]],
                                       "target_identifier": target[0],
                                       "target_labels": [target[1]]}))  # fmt: skip

    def frameworks(self) -> None:
        """Frameworks and their items: framework > domain > cluster > standard > component."""
        frameworks = self.want_nodes["StandardsFramework"]
        per_framework = max(1, self.want_nodes["StandardsFrameworkItem"] // frameworks)
        item_budget = self.want_nodes["StandardsFrameworkItem"]
        for f in range(frameworks):
            remaining = per_framework if f < frameworks - 1 else item_budget
            item_budget -= remaining
            self._framework(f, remaining)
        std = [i[0] for i in self.items]
        for _ in range(max(0, self.want_rels["hasChild"] - self.child_edges)):
            a, b = self.rng.sample(std, 2)  # a few items with two parents
            self.rel("hasChild", (a, "StandardsFrameworkItem"), (b, "StandardsFrameworkItem"))

    def _framework(self, f: int, remaining: int) -> None:
        rng = self.rng
        jurisdiction = "Multi-State" if f % 10 == 0 else rng.choice(_STATES)
        subject = _SUBJECTS[f % len(_SUBJECTS)]
        fid, case = self.w.uid(), self.w.uid()
        self.node("StandardsFramework", fid, {
            "jurisdiction": jurisdiction, "academicSubject": subject, "license": _LICENSE,
            "attributionStatement": _ATTRIBUTION.format(subject, jurisdiction),
            "adoptionStatus": "Implemented",
            "dateModified": "2025-02-11", "isCurrent": "true" if f % 17 else "false",
            "provider": "Learning Commons", "inLanguage": "en-US", "caseIdentifierUUID": case,
            "author": f"{jurisdiction} Department of Education",
            "caseIdentifierURI": f"https://satchelcommons.com/ims/case/v1p0/CFDocuments/{case}",
            "name": f"{jurisdiction} {subject} Standards ({f})",
        })  # fmt: skip
        top: _Level = [(fid, "StandardsFramework", "", None)]
        level, made, depth = top, 0, 0
        while made < remaining:
            parents, level = level, []
            for parent in parents:
                made = self._children(
                    f, parent, depth, made, remaining, level, (jurisdiction, subject)
                )
            depth += 1
            if not level or depth > 3:  # five levels deep at most: start more domains
                level, depth = top, 0

    def _children(
        self,
        f: int,
        parent: tuple[str, str, str, str | None],
        depth: int,
        made: int,
        remaining: int,
        level: _Level,
        where: tuple[str, str],
    ) -> int:
        """Add one parent's children at `depth`; return how many items exist now."""
        rng = self.rng
        parent_id, parent_label, parent_code, parent_grade = parent
        jurisdiction, subject = where
        kind = _DEPTH_TYPES[min(depth, 3)]
        fanout = (rng.randint(3, 8), rng.randint(3, 6), rng.randint(4, 10), rng.randint(0, 4))[
            depth
        ]
        if depth >= 3 and made + fanout > remaining:
            fanout = remaining - made
        for n in range(fanout):
            if made >= remaining:
                break
            grade = parent_grade or rng.choice(_GRADES)
            code = f"{parent_code}.{n + 1}" if parent_code else f"{grade}.{chr(65 + n)}{f % 9}"
            iid, icase = self.w.uid(), self.w.uid()
            grades = [grade] if rng.random() > 0.1 else list(_GRADES[9:])
            self.node("StandardsFrameworkItem", iid, {
                "jurisdiction": jurisdiction, "license": _LICENSE,
                "gradeLevel": orjson.dumps(grades).decode(),
                "attributionStatement": _ATTRIBUTION.format(subject, jurisdiction),
                "adoptionStatus": "Adopted", "normalizedStatementType": kind[1],
                "description": self.w.text(6, 40) if depth >= 2 else self.w.text(3, 8),
                "dateModified": "2025-03-27", "statementCode": code, "isCurrent": "true",
                "provider": "Learning Commons", "inLanguage": "en-US",
                "caseIdentifierUUID": icase, "author": f"{jurisdiction} Department of Education",
                "academicSubject": subject, "statementType": kind[0],
                "caseIdentifierURI": f"https://satchelcommons.com/ims/case/v1p0/CFItems/{icase}",
            })  # fmt: skip
            self.rel("hasChild", (parent_id, parent_label), (iid, "StandardsFrameworkItem"))
            self.child_edges += 1
            self.items.append((iid, jurisdiction, subject, grades))
            self.items_more.append((iid, f"f{f:04d}", subject, grades, kind[1] == "Standard"))
            level.append((iid, "StandardsFrameworkItem", code, grade))
            made += 1
        return made

    def components_and_links(self) -> None:
        """Learning components supporting standards; crosswalks and progressions."""
        rng, w = self.rng, self.w
        std = [i[0] for i in self.items]
        lcs = [w.uid() for _ in range(self.want_nodes["LearningComponent"])]
        subjects = [rng.choice(_SUBJECTS) for _ in lcs]
        for lc, subject in zip(lcs, subjects, strict=True):
            self.node("LearningComponent", lc, {
                "description": w.text(5, 14), "examples": orjson.dumps([w.text(8, 20)]).decode(),
                "academicSubject": subject, "author": "Achievement Network",
                "provider": "Learning Commons", "license": _LICENSE, "inLanguage": "en-US",
                "attributionStatement": "Knowledge Graph is provided by Learning Commons under the "
                "CC BY-4.0 license. Learning Commons received learning components under CC BY-4.0 "
                "from Achievement Network.", "dateCreated": "2025-04-01", "dateModified": "2025-04-01",
            })  # fmt: skip
        self._supports(lcs, subjects)
        for _ in range(self.want_rels["hasStandardAlignment"]):
            shared = rng.randint(1, 5)
            state, ccss = shared + rng.randint(0, 3), shared + rng.randint(0, 3)
            self.rel("hasStandardAlignment", (rng.choice(std), "StandardsFrameworkItem"),
                     (rng.choice(std), "StandardsFrameworkItem"),
                     jaccard=f"{shared / (state + ccss - shared):.4f}", stateLCCount=str(state),
                     ccssLCCount=str(ccss), sharedLCCount=str(shared),
                     dateCreated="2026-07-09")  # fmt: skip
        for label in ("buildsTowards", "relatesTo"):
            for _ in range(self.want_rels[label]):
                a, b = rng.sample(std, 2)
                self.rel(label, (a, "StandardsFrameworkItem"), (b, "StandardsFrameworkItem"))

    def _supports(self, lcs: list[str], subjects: list[str]) -> None:
        """`supports` edges as the real export has them: a learning component is one skill
        of one subject and grade, and supports a standard of that subject and grade in
        each of several frameworks (so states share components, as crosswalks need)."""
        rng = self.rng
        pools: dict[tuple[str, str], dict[str, list[str]]] = {}
        for identifier, framework, subject, grades, is_standard in self.items_more:
            if is_standard:
                for grade in grades:
                    pools.setdefault((subject, grade), {}).setdefault(framework, []).append(
                        identifier
                    )
        keys = sorted(pools)
        budget, lc_index = self.want_rels["supports"], 0
        per_lc = max(1, budget // max(1, len(lcs)))
        while budget > 0 and keys:
            lc, subject = lcs[lc_index % len(lcs)], subjects[lc_index % len(lcs)]
            lc_index += 1
            matching = [k for k in keys if k[0] == subject] or keys
            frameworks = pools[rng.choice(matching)]
            names = sorted(frameworks)
            for framework in rng.sample(names, min(len(names), rng.randint(1, 2 * per_lc))):
                if budget <= 0:
                    break
                standard = rng.choice(frameworks[framework])
                self.rel(
                    "supports", (lc, "LearningComponent"), (standard, "StandardsFrameworkItem")
                )
                budget -= 1

    def _curriculum_nodes(self, label: str, count: int, extra: dict[str, Any]) -> list[str]:
        made = []
        for n in range(count):
            identifier = f"im:{self.w.uid()}"
            grade = self.rng.choice(_GRADES)
            self.node(label, identifier, {
                **_CURRICULUM_COMMON, "name": self.w.text(2, 6)[:-1],
                "courseCode": f"im360:{grade}",
                "curriculumLabel": extra.get("curriculumLabel", label),
                "ordinalName": f"{extra.get('ordinal', label)} {n % 20 + 1}",
                "gradeLevel": orjson.dumps([grade]).decode(),
            })  # fmt: skip
            made.append(identifier)
        return made

    def curriculum(self) -> None:
        """Courses > units > lessons > activities; assessments; alignments."""
        rng, want = self.rng, self.want_nodes
        courses = self._curriculum_nodes("Course", want["Course"], {"curriculumLabel": "Course"})
        groupings = self._curriculum_nodes("LessonGrouping", want["LessonGrouping"],
                                           {"curriculumLabel": "Unit", "ordinal": "Unit"})  # fmt: skip
        lessons = self._curriculum_nodes("Lesson", want["Lesson"], {"ordinal": "Lesson"})
        activities = self._curriculum_nodes("Activity", want["Activity"],
                                            {"curriculumLabel": "Activity", "ordinal": "Activity"})  # fmt: skip
        assessments = self._curriculum_nodes(
            "Assessment", want["Assessment"],
            {"curriculumLabel": "Practice Problems", "ordinal": "Assessment"},
        )  # fmt: skip
        parts = [(rng.choice(courses), "Course", g, "LessonGrouping") for g in groupings]
        parts += [(rng.choice(groupings), "LessonGrouping", x, "Lesson") for x in lessons]
        parts += [(rng.choice(lessons), "Lesson", x, "Activity") for x in activities]
        parts += [(rng.choice(lessons), "Lesson", x, "Assessment") for x in assessments]
        for source, s_label, target, t_label in parts[: self.want_rels["hasPart"]]:
            self.rel("hasPart", (source, s_label), (target, t_label))
        content = [(x, "Lesson") for x in lessons] + [(x, "Activity") for x in activities] + [
            (x, "Assessment") for x in assessments]  # fmt: skip
        std = [i[0] for i in self.items]
        kinds = ("addressing", "building_toward", "building_on", "practicing")
        for _ in range(self.want_rels["hasEducationalAlignment"]):
            self.rel("hasEducationalAlignment", rng.choice(content),
                     (rng.choice(std), "StandardsFrameworkItem"),
                     curriculumAlignmentType=orjson.dumps([rng.choice(kinds)]).decode())  # fmt: skip
        for label, pool, pool_label in (("hasDependency", groupings, "LessonGrouping"),
                                        ("mutuallyExclusiveWith", assessments, "Assessment"),
                                        ("hasReference", assessments, "Assessment")):  # fmt: skip
            for _ in range(self.want_rels[label]):
                a, b = rng.sample(pool, 2)
                self.rel(label, (a, pool_label), (b, pool_label))
