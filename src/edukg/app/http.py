"""The small HTTP shapes every part of the app speaks, defined once."""

from __future__ import annotations

from typing import NamedTuple

Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, bytes, Headers]  # status, body, headers of a whole response
JSON = (b"content-type", b"application/json")


class Representation(NamedTuple):
    """A 200 answer with its strong ETag (also among its headers): what the response
    stage may turn into a 304 (app/respond.py)."""

    body: bytes
    headers: Headers
    tag: bytes
