"""Standards frameworks by CASE UUID: the one lookup every operation that names a
framework uses (crosswalks, coverage, alignment, search within a framework)."""

from __future__ import annotations

from edukg.model.errors import NotFoundError
from edukg.model.vocabulary import FRAMEWORK
from edukg.store.base import Found, Store


def framework(store: Store, case_uuid: str, role: str = "") -> Found:
    """A standards framework by CASE UUID; a 404 (naming its `role`, if given) when none."""
    found = store.by_case_uuid(case_uuid, (FRAMEWORK,))
    if found is None:
        named = f" ({role})" if role else ""
        raise NotFoundError(
            f'Standards framework with CASE UUID "{case_uuid}"{named} not found. '
            "GET standards-frameworks lists the loaded ones."
        )
    return found
