"""The rows a loader takes (part of the store interface, store.base.Loader): what the
ingest side builds and every backend writes."""

from __future__ import annotations

NodeRow = tuple[str, str, str | None, bytes]  # identifier, label, served kind, raw line
EdgeRow = tuple[str, str, str, str, bytes]  # identifier, label, source, target, raw line
# identifier, kind, case_uuid, jurisdiction, subject, stmt_type, grades, adoption, current,
# doc, code, text, alternate code
DocRow = tuple[
    str, str, str | None, str | None, str | None, str | None, int, str | None, int, bytes,
    str | None, str | None, str | None,
]  # fmt: skip
# edge identifier, jaccard, stateLCCount, ccssLCCount, sharedLCCount
FigureRow = tuple[str, float, int | None, int | None, int | None]
