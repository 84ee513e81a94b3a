"""The SQL of a build: the neighbour lists, framework membership, the crosswalk source and
the semantic index's rows, computed once in the SQLite build that every load makes
(a PostgreSQL load publishes the result), and the load summary's counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edukg.store.base import (
    ALIGNED_CONTENT,
    BUILDS_TOWARDS,
    CHILDREN,
    COMPONENTS,
    FRAMEWORK_OF,
    PARENTS,
    PREREQUISITES,
    RELATED,
    SUPPORTED,
)

# Neighbour lists: (relation, edge label, node column, other column).
LINKS = (
    (CHILDREN, "hasChild", "source", "target"),
    (PARENTS, "hasChild", "target", "source"),
    (PREREQUISITES, "buildsTowards", "target", "source"),
    (BUILDS_TOWARDS, "buildsTowards", "source", "target"),
    (RELATED, "relatesTo", "source", "target"),
    (RELATED, "relatesTo", "target", "source"),  # the export has both; either alone works
    (COMPONENTS, "supports", "target", "source"),
    (SUPPORTED, "supports", "source", "target"),  # learning component -> standards
    (ALIGNED_CONTENT, "hasEducationalAlignment", "target", "source"),  # standard -> content
)

# CASE_EDGES: from each standard or framework end to the edge, when the other end is a
# standard, a framework or not a served record (an end outside the data). Parameter: the
# relation's name.
CASE_EDGES = tuple(
    "INSERT OR IGNORE INTO links SELECT ?, n.identifier, e.identifier FROM edges e"
    f" JOIN nodes n ON n.identifier = e.{end} AND n.kind IN ('standard', 'framework')"
    f" LEFT JOIN nodes o ON o.identifier = e.{other}"
    " WHERE o.kind IS NULL OR o.kind IN ('standard', 'framework') ORDER BY 2, 3"
    for end, other in (("source", "target"), ("target", "source"))
)

# The names CASE definitions are made of: (kind, name) pairs; a framework's subjects are
# those its CASE package named, else its academic subject.
CASE_NAMES = (
    "SELECT DISTINCT 'CFItemTypes', json_extract(CAST(doc AS TEXT), '$.statementType')"
    " FROM docs WHERE kind = 'standard'"
    " UNION SELECT DISTINCT 'CFSubjects', coalesce(j.value, d.subject) FROM docs d"
    " LEFT JOIN json_each(CAST(d.doc AS TEXT), '$.caseSubject') j WHERE d.kind = 'framework'"
    " UNION SELECT DISTINCT 'CFLicenses', json_extract(CAST(doc AS TEXT), '$.license')"
    " FROM docs WHERE kind = 'framework'"
)

# Items of a framework: standards of a standards framework, skills of a skills framework,
# reachable through hasChild. Parameters: the children relation, twice; it reads the
# build's narrow copy of the records (temp.items).
MEMBERSHIP = (
    "INSERT INTO membership"
    " WITH RECURSIVE reach(framework, member_kind, identifier) AS ("
    "  SELECT d.identifier, CASE d.kind WHEN 'framework' THEN 'standard' ELSE 'skill' END,"
    "   l.other FROM temp.items d JOIN links l ON l.relation = ? AND l.node = d.identifier"
    "   WHERE d.kind IN ('framework', 'skills-framework')"
    "  UNION"
    "  SELECT r.framework, r.member_kind, l.other FROM reach r JOIN links l"
    "   ON l.relation = ? AND l.node = r.identifier)"
    " SELECT r.framework, r.identifier, d.grades, d.subject, d.stmt_type"
    " FROM reach r JOIN temp.items d ON d.identifier = r.identifier AND d.kind = r.member_kind"
    " WHERE true"  # lets SQLite parse the ON CONFLICT clause that follows
)

# Each framework item's framework(s), from the membership just computed: what tells two
# frameworks' items apart when crosswalks are derived from learning components.
FRAMEWORK_LINKS = (
    f"INSERT OR IGNORE INTO links SELECT '{FRAMEWORK_OF}', identifier, framework"
    " FROM membership ORDER BY 2, 3"
)

# Each framework's standards with their records and learning components, in framework
# order, for the FRAMEWORK_ITEMS rows.
FRAMEWORK_ITEMS_SOURCE = (
    "SELECT m.framework, m.identifier, d.doc, (SELECT group_concat(l.other, ' ') FROM links l"
    f" WHERE l.relation = '{COMPONENTS}' AND l.node = m.identifier)"
    " FROM membership m JOIN docs d ON d.identifier = m.identifier AND d.kind = 'standard'"
    " ORDER BY m.framework, m.identifier"
)

_COUNTS = {
    "nodes": "SELECT label, count(*) FROM nodes GROUP BY label ORDER BY 1",
    "relationships": "SELECT label, count(*) FROM edges GROUP BY label ORDER BY 1",
    "dangling": "SELECT 'dangling', count(*) FROM edges e WHERE NOT EXISTS"
    " (SELECT 1 FROM nodes n WHERE n.identifier = e.source)"
    " OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.identifier = e.target)",
}


def counts(fetch: Callable[[str], list[tuple[Any, ...]]]) -> dict[str, Any]:
    """Records per node label and relationship label, and dangling relationships."""
    return {
        "nodes": {str(k): int(v) for k, v in fetch(_COUNTS["nodes"])},
        "relationships": {str(k): int(v) for k, v in fetch(_COUNTS["relationships"])},
        "dangling": int(fetch(_COUNTS["dangling"])[0][1]),
    }


# Crosswalk edges with both sides' records and the figures (see crosswalk_rows).
CROSSWALK_SOURCE = (
    "SELECT e.source, e.target, f.jaccard, f.state, f.ccss, f.shared,"
    " s.doc, s.jurisdiction, t.doc, t.jurisdiction"
    " FROM edges e JOIN figures f ON f.identifier = e.identifier"
    " JOIN docs s ON s.identifier = e.source AND s.kind = 'standard'"
    " JOIN docs t ON t.identifier = e.target AND t.kind = 'standard'"
    " WHERE e.label = 'hasStandardAlignment'"
)


# The rows of the semantic index: searchable records with text, numbered so that one
# kind and jurisdiction is one run of rows (a search reads one stretch of the vectors).
SEMANTIC = """
CREATE TABLE semantic AS SELECT row_number() OVER
  (ORDER BY kind, coalesce(jurisdiction, ''), identifier) - 1 AS row,
  identifier, kind, jurisdiction, subject, stmt_type, grades
  FROM temp.items WHERE kind IN ('standard', 'component', 'skill') AND coalesce(text, '') <> '';
CREATE INDEX semantic_scope ON semantic (kind, jurisdiction, subject, row);
CREATE UNIQUE INDEX semantic_row ON semantic (row)
"""
