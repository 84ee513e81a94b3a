"""The API's operations, one module per resource family."""

from __future__ import annotations

from typing import Any

from edukg.adapters.rest import (
    alignment,
    components,
    curriculum,
    durable_skills,
    frameworks,
    releases,
    search,
    standards,
    text_alignment,
)
from edukg.adapters.rest.base import Call, Operation

OPERATIONS: tuple[Operation[Any], ...] = (
    *search.OPERATIONS,
    *frameworks.OPERATIONS,
    *standards.OPERATIONS,
    *components.OPERATIONS,
    *curriculum.OPERATIONS,
    *durable_skills.OPERATIONS,
    *releases.OPERATIONS,
    *alignment.OPERATIONS,
    *text_alignment.OPERATIONS,
)

__all__ = ["OPERATIONS", "Call", "Operation"]
