"""The operations on the graph, shared by the HTTP routes, the CLI and assistants.

Each function takes a Store and typed arguments and returns pre-encoded records
(or a page of them); errors are ApiErrors. No SQL here: that is the Store's.
"""

from __future__ import annotations

from dataclasses import dataclass

from edukg.errors import NotFoundError, ServiceUnavailableError
from edukg.store.base import (
    COMPONENT,
    COMPONENTS,
    FRAMEWORK,
    STANDARD,
    Crosswalks,
    DataInfo,
    Found,
    Linked,
    Members,
    OfKind,
    Query,
    Row,
    Store,
)


@dataclass(frozen=True)
class Page:
    """Up to limit+1 rows: the extra one only says whether more follow."""

    rows: list[Row]
    limit: int


def loaded(store: Store) -> DataInfo:
    """The loaded data's info, or 503 when nothing is loaded yet."""
    info = store.info()
    if info is None:
        raise ServiceUnavailableError(
            "No data is loaded yet. Load an export with `edukg load` or the demo graph with "
            "`edukg demo`."
        )
    return info


def _page(store: Store, query: Query, after: str | None, limit: int) -> Page:
    return Page(store.page(query, after, limit + 1), limit)


def _no_standard(case_uuid: str) -> NotFoundError:
    return NotFoundError(
        f'Academic standard with CASE Network UUID "{case_uuid}" not found. '
        "Verify the UUID is correct.",
    )


def standard(store: Store, case_uuid: str) -> Found:
    """One academic standard by CASE UUID."""
    found = store.by_case_uuid(case_uuid, (STANDARD,))
    if found is None:
        raise _no_standard(case_uuid)
    return found


def standards_in_framework(
    store: Store,
    framework_case_uuid: str,
    grades_mask: int,
    subject: str | None,
    statement_type: str | None,
    after: str | None,
    limit: int,
) -> Page:
    """Items of a framework; an unknown framework has no items."""
    framework = store.by_case_uuid(framework_case_uuid, (FRAMEWORK,))
    if framework is None:
        return Page([], limit)
    query = Members(framework.identifier, grades_mask, subject, statement_type)
    return _page(store, query, after, limit)


def linked(store: Store, case_uuid: str, relation: str, after: str | None, limit: int) -> Page:
    """Records linked to a standard: children, prerequisites, builds-towards, related, LCs.

    Children may also be asked of a framework's CASE UUID: its top-level items.
    """
    kinds = (STANDARD, FRAMEWORK) if relation == "child" else (STANDARD,)
    found = store.by_case_uuid(case_uuid, kinds)
    if found is None:
        raise _no_standard(case_uuid)
    return _page(store, Linked(relation, found.identifier), after, limit)


def learning_components_of(store: Store, case_uuid: str, after: str | None, limit: int) -> Page:
    """Learning components that support a standard."""
    return linked(store, case_uuid, COMPONENTS, after, limit)


def crosswalks(
    store: Store,
    case_uuid: str,
    jurisdiction: str | None,
    min_jaccard: float | None,
    after: str | None,
    limit: int,
) -> Page:
    """Standards aligned to a standard, from either side of the crosswalk."""
    found = standard(store, case_uuid)
    return _page(store, Crosswalks(found.identifier, jurisdiction, min_jaccard), after, limit)


def learning_component(store: Store, identifier: str) -> Found:
    """One learning component by identifier."""
    found = store.by_identifier(identifier, COMPONENT)
    if found is None:
        raise NotFoundError(f'Learning component with identifier "{identifier}" not found.')
    return found


def learning_components(store: Store, subject: str | None, after: str | None, limit: int) -> Page:
    """All learning components, optionally of one subject."""
    return _page(store, OfKind(COMPONENT, subject=subject), after, limit)


def frameworks(
    store: Store,
    jurisdiction: str | None,
    subject: str | None,
    adoption_status: str | None,
    include_non_current: bool,
    after: str | None,
    limit: int,
) -> Page:
    """Standards frameworks; current ones only unless asked otherwise."""
    query = OfKind(
        FRAMEWORK,
        subject=subject,
        jurisdiction=jurisdiction,
        adoption_status=adoption_status,
        current_only=not include_non_current,
    )
    return _page(store, query, after, limit)
