"""The demo graph: a small, synthetic graph in the export's own format.

Every statement below was written for edukg; none is copied from a real
standards document. Records say so in `author` and `attributionStatement`.
The graph is generated in memory, deterministically, and loaded through the
same loader as a real export. Later features extend this one module.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from edukg.ingest import demo_curriculum
from edukg.ingest.demo_graph import (
    BUILDS_TOWARDS,
    COMPONENTS,
    ELA,
    ELA_COMPONENTS,
    MATH,
    PRACTICES,
    RELATES_TO,
    RETIRED,
    STATE_ITEMS,
    DemoGraph,
    demo_uuid,
)

_DOMAIN = ("Domain", "Standard Grouping")
_CLUSTER = ("Cluster", "Standard Grouping")
_STANDARD = ("Standard", "Standard")
_COMPONENT = ("Component", "Standard")


def _math(g: DemoGraph) -> str:
    fw = g.framework(
        "ms-math", "edukg Demo Mathematics Standards", "Multi-State", "Mathematics",
        notes="A small synthetic framework shaped like a multi-state mathematics standard.",
    )  # fmt: skip
    mp_group = g.item(
        "ms-math", None, "ms-math:MP", "Mathematical practices for every grade",
        ["K", *map(str, range(1, 13))], ("Standard Grouping", "Standard Grouping"),
        "Multi-State", "Mathematics",
    )  # fmt: skip
    g.edge("hasChild", fw, mp_group)
    for n, statement in enumerate(PRACTICES, start=1):
        mp = g.item(
            "ms-math", f"MP{n}", f"ms-math:MP{n}", statement,
            ["K", *map(str, range(1, 13))], ("Practice Standard", "Standard"),
            "Multi-State", "Mathematics",
        )  # fmt: skip
        g.edge("hasChild", mp_group, mp)
    for grade, dcode, dname, clusters in MATH:
        domain_code = f"{grade}.{dcode}"
        domain = g.item(
            "ms-math", domain_code, f"ms-math:{domain_code}", dname, [grade], _DOMAIN,
            "Multi-State", "Mathematics",
        )  # fmt: skip
        g.edge("hasChild", fw, domain)
        for ccode, cstatement, standards in clusters:
            cluster_code = f"{domain_code}.{ccode}"
            cluster = g.item(
                "ms-math", cluster_code, f"ms-math:{cluster_code}", cstatement, [grade],
                _CLUSTER, "Multi-State", "Mathematics",
            )  # fmt: skip
            g.edge("hasChild", domain, cluster)
            for scode, statement, subs in standards:
                code = f"{cluster_code}.{scode}"
                std = g.item(
                    "ms-math", code, f"ms-math:{code}", statement, [grade], _STANDARD,
                    "Multi-State", "Mathematics",
                )  # fmt: skip
                g.edge("hasChild", cluster, std)
                for letter, sub_statement in subs:
                    sub = g.item(
                        "ms-math", f"{code}.{letter}", f"ms-math:{code}.{letter}",
                        sub_statement, [grade], _COMPONENT, "Multi-State", "Mathematics",
                    )  # fmt: skip
                    g.edge("hasChild", std, sub)
    return fw


def _components(
    g: DemoGraph, framework_key: str, table: dict[str, list[str]], subject: str
) -> None:
    for code, descriptions in table.items():
        target = g.by_code[(framework_key, code)]["identifier"]
        for n, description in enumerate(descriptions):
            lc = g.node(
                "LearningComponent",
                f"lc:{code}:{n}",
                g.common(
                    description=description,
                    academicSubject=subject,
                    examples=orjson.dumps([f"A task for {code}: {description.lower()}."]).decode(),
                ),
            )
            g.edge(
                "supports",
                lc["identifier"],
                target,
                description="The learning component supports the standard (synthetic).",
            )


def _progressions(g: DemoGraph) -> None:
    def ident(code: str) -> str:
        return str(g.by_code[("ms-math", code)]["identifier"])

    for earlier, later in BUILDS_TOWARDS:
        g.edge("buildsTowards", ident(earlier), ident(later))
    for a, b in RELATES_TO:  # the export stores relatesTo in both directions
        g.edge("relatesTo", ident(a), ident(b))
        g.edge("relatesTo", ident(b), ident(a))


def _state(g: DemoGraph) -> None:
    fw = g.framework(
        "vt-math", "edukg Demo State Mathematics Standards", "Vermont", "Mathematics",
        notes="Synthetic; modelled on a state edition that adapts the multi-state standards.",
    )  # fmt: skip
    domains: dict[str, str] = {}
    supporters: dict[str, list[str]] = {}
    for edge in g.edges:
        if edge["label"] == "supports":
            supporters.setdefault(edge["target_identifier"], []).append(edge["source_identifier"])
    for code, ms_code, grade, statement, dropped in STATE_ITEMS:
        domain_code = code.rsplit(".", 1)[0]
        if domain_code not in domains:
            domains[domain_code] = g.item(
                "vt-math", domain_code, f"vt-math:{domain_code}",
                f"Grade {grade} {'fractions' if 'NF' in code else 'operations'}", [grade],
                _DOMAIN, "Vermont", "Mathematics",
            )  # fmt: skip
            g.edge("hasChild", fw, domains[domain_code])
        ms = g.by_code[("ms-math", ms_code)]
        text = statement or ms["properties"]["description"]
        item = g.item(
            "vt-math", code, f"vt-math:{code}", text, [grade], _STANDARD, "Vermont", "Mathematics"
        )
        g.edge("hasChild", domains[domain_code], item)
        ms_lcs = supporters.get(ms["identifier"], [])
        state_lcs = ms_lcs[: len(ms_lcs) - dropped] if dropped else ms_lcs
        for lc in state_lcs:
            g.edge("supports", lc, item, description="Supports the state standard (synthetic).")
        shared = len(state_lcs)
        union = len(ms_lcs)
        g.edge(
            "hasStandardAlignment",
            item,
            ms["identifier"],
            jaccard=f"{shared / union:.4f}" if union else "0.0",
            stateLCCount=str(len(state_lcs)),
            ccssLCCount=str(len(ms_lcs)),
            sharedLCCount=str(shared),
            description="A synthetic crosswalk from the demo state standard to its "
            "multi-state counterpart, scored by shared learning components.",
        )
    old = g.framework(
        "vt-math-2009", "edukg Demo State Mathematics Standards (2009 edition)", "Vermont",
        "Mathematics", adoptionStatus="Retired", isCurrent="false",
    )  # fmt: skip
    for code, grade, statement in RETIRED:
        item = g.item(
            "vt-math-2009", code, f"vt-math-2009:{code}", statement, [grade], _STANDARD,
            "Vermont", "Mathematics",
        )  # fmt: skip
        g.edge("hasChild", old, item)


def _ela(g: DemoGraph) -> None:
    fw = g.framework(
        "ms-ela", "edukg Demo English Language Arts Standards", "Multi-State",
        "English Language Arts",
    )  # fmt: skip
    strands: dict[str, str] = {}
    for code, grade, statement in ELA:
        strand_code = code.rsplit(".", 1)[0]
        if strand_code not in strands:
            name = "Reading: Literature" if code.startswith("RL") else "Reading: Informational Text"
            strands[strand_code] = g.item(
                "ms-ela", strand_code, f"ms-ela:{strand_code}", f"{name}, grade {grade}",
                [grade], ("Strand", "Standard Grouping"), "Multi-State", "English Language Arts",
            )  # fmt: skip
            g.edge("hasChild", fw, strands[strand_code])
        item = g.item(
            "ms-ela", code, f"ms-ela:{code}", statement, [grade], _STANDARD, "Multi-State",
            "English Language Arts",
        )  # fmt: skip
        g.edge("hasChild", strands[strand_code], item)


def demo_lines() -> Iterator[bytes]:
    """The demo graph as export lines: nodes first, then relationships."""
    g = DemoGraph()
    _math(g)
    _ela(g)
    _components(g, "ms-math", COMPONENTS, "Mathematics")
    _components(g, "ms-ela", ELA_COMPONENTS, "English Language Arts")
    _progressions(g)
    _state(g)
    demo_curriculum.curriculum(g)
    demo_curriculum.durable_skills(g)
    yield from g.lines()


def demo_node_id(key: str) -> str:
    """The identifier of a demo curriculum node (`course`, `unit1`, `lesson3`, ...)."""
    return demo_curriculum.node_id(key)


def demo_skill_id(key: str) -> str:
    """The identifier of a demo durable skill (`COL`, `COL.1`, `COL.1.2`) or `skills`."""
    return demo_uuid("node", key if key == "skills" else f"skills:{key}")


def demo_case_uuid(framework_key: str, code: str) -> str:
    """The CASE UUID the demo gives the item `code` of a framework (for tests and docs)."""
    return demo_uuid("case", f"{framework_key}:{code}")


def demo_framework_case_uuid(framework_key: str) -> str:
    """The CASE UUID of a demo framework (`ms-math`, `vt-math`, `vt-math-2009`, `ms-ela`)."""
    return demo_uuid("case", framework_key)
