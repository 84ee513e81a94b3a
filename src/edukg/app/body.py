"""A request's body: read whole, within the one body limit, or refused before reading.

The limit holds for every entrance that takes a body (POST alignments, /mcp), and a body
is read only once its request's key is known good (app/pipeline.py). A declared length
over the limit is refused without reading; a body sent without one is counted as it
arrives; a whole body has BODY_SECONDS to arrive, each part _PART_SECONDS. What a refused
client still sends is read and dropped, a bounded amount, so that it reads the 413 rather
than a reset connection (docs/security.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from edukg.model.errors import (
    PayloadTooLargeError,
    RequestTimeoutError,
    UnsupportedMediaTypeError,
)

MAX_BODY_BYTES = 256 * 1024
_DRAIN_BYTES = 1 << 20  # at most this much of a refused body is read and dropped
_DRAIN_SECONDS = 1.0
_PART_SECONDS = 10.0  # the longest wait for the next part of a body being sent
BODY_SECONDS = 20.0  # the longest a whole body may take to arrive (256 KiB at 13 KB/s)

Head = dict[bytes, bytes]  # the headers the pipeline read (exchange.read_head)
Receive = Callable[[], Awaitable[dict[str, Any]]]


def declared_length(head: Head) -> int | None:
    """The request's Content-Length, when it gives a valid one."""
    value = head.get(b"content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def too_large() -> PayloadTooLargeError:
    """The 413 every entrance answers for a body over the limit."""
    return PayloadTooLargeError(
        f"The request body is larger than {MAX_BODY_BYTES} bytes ({MAX_BODY_BYTES // 1024} KiB)."
    )


async def read_body(head: Head, receive: Receive) -> bytes:
    """The whole body, at most MAX_BODY_BYTES; PayloadTooLargeError (after draining a
    bounded amount of what is still coming) for a larger one."""
    length = declared_length(head)
    if length is not None and length > MAX_BODY_BYTES:
        # A client that asked to be told first (Expect: 100-continue) is told now, before
        # anything invites it to send; one already sending is drained a little, so that
        # it reads the 413 rather than a reset connection.
        if head.get(b"expect", b"").strip().lower() != b"100-continue":
            await drain(receive)
        raise too_large()
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + BODY_SECONDS
    while True:
        left = deadline - time.monotonic()
        try:
            message = await asyncio.wait_for(receive(), min(_PART_SECONDS, max(0.0, left)))
        except TimeoutError:
            if left <= _PART_SECONDS:
                raise RequestTimeoutError(
                    f"The request body took longer than {BODY_SECONDS:g} s to arrive."
                ) from None
            raise RequestTimeoutError(
                f"The request body stopped arriving (nothing for {_PART_SECONDS:g} s)."
            ) from None
        if message["type"] == "http.disconnect":
            return b""
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            if message.get("more_body", False):
                await drain(receive)
            raise too_large()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def drain(receive: Receive) -> None:
    """Read and drop what the client still sends, up to _DRAIN_BYTES or _DRAIN_SECONDS."""
    deadline = time.monotonic() + _DRAIN_SECONDS
    dropped = 0
    while dropped < _DRAIN_BYTES and time.monotonic() < deadline:
        try:
            message = await asyncio.wait_for(receive(), deadline - time.monotonic())
        except TimeoutError:
            return
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        dropped += len(message.get("body", b""))


def closes_connection(exc: Exception) -> bool:
    """Whether a refusal leaves part of the body unread (the connection is closed)."""
    return isinstance(exc, PayloadTooLargeError | RequestTimeoutError)


def require_json(head: Head) -> None:
    """415 unless the body is declared JSON (application/json, or a +json type)."""
    value = head.get(b"content-type")
    if value is not None:
        media = value.split(b";", 1)[0].strip().lower()
        if media == b"application/json" or media.endswith(b"+json"):
            return
    raise UnsupportedMediaTypeError(
        "The request body must be JSON: send it with Content-Type: application/json."
    )
