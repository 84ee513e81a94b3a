"""Timestamps as edukg writes them: UTC, to the second, with a Z."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_timestamp() -> str:
    """Now, as `2026-11-26T09:30:00Z` (load times, key creation and revocation)."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
