"""CASE errors: an `imsx_StatusInfo` object at the top level of the body."""

from __future__ import annotations

import orjson

from edukg.model.errors import ApiError

# CASE 1.0 spells two code minor values without the underscore.
_V1P0_SPELLING = {"invalid_uuid": "invaliduuid", "unauthorised_request": "unauthorisedrequest"}


class CaseError(ApiError):
    """A CASE request that cannot be answered: its status and code minor value (an
    ApiError, so the request pipeline refuses it as any other, in CASE's shape)."""

    def __init__(self, status: int, minor: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.minor = minor
        self.description = description


def status_info(minor: str, description: str, version: str) -> bytes:
    """The body of a CASE error answer."""
    if version == "v1p0":
        minor = _V1P0_SPELLING.get(minor, minor)
    return orjson.dumps(
        {
            "imsx_codeMajor": "failure",
            "imsx_severity": "error",
            "imsx_description": description,
            "imsx_codeMinor": {
                "imsx_codeMinorField": [
                    {"imsx_codeMinorFieldName": "sourcedId", "imsx_codeMinorFieldValue": minor}
                ]
            },
        }
    )
