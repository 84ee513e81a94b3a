"""The API's operations, one module per resource family."""

from __future__ import annotations

from edukg.api import components, frameworks, standards
from edukg.api.base import Call, Operation

OPERATIONS: tuple[Operation, ...] = (
    *frameworks.OPERATIONS,
    *standards.OPERATIONS,
    *components.OPERATIONS,
)

__all__ = ["OPERATIONS", "Call", "Operation"]
