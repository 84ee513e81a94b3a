"""The Error shape and the exceptions that map onto it."""

from __future__ import annotations

import itertools
import os
import secrets
from typing import Any

import orjson


class ApiError(Exception):
    """An error answered to the client as `{"error","message","requestId","details"?}`."""

    status = 500
    error = "InternalServerError"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class that declares its own status is a kind of error the Error shape names
        # (`ValidationError`); one that does not (workpool.Busy) is answered as its parent.
        super().__init_subclass__(**kwargs)
        if "status" in cls.__dict__:
            cls.error = cls.__name__

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class ValidationError(ApiError):
    """A malformed or missing parameter: 400."""

    status = 400


class AuthenticationError(ApiError):
    """A missing, unknown or revoked API key: 401."""

    status = 401


class ForbiddenError(ApiError):
    """A browser origin this server does not answer (MCP's DNS-rebinding rule): 403."""

    status = 403


class NotFoundError(ApiError):
    """The path or the record does not exist: 404."""

    status = 404


class MethodNotAllowedError(ApiError):
    """A method the path does not take (GET or HEAD; POST for the one operation with a
    body): 405."""

    status = 405


class URITooLongError(ApiError):
    """A request line longer than any legitimate one: 414."""

    status = 414


class HeadersTooLargeError(ApiError):
    """Request headers beyond any legitimate size: 431."""

    status = 431


class RequestTimeoutError(ApiError):
    """A request body that stopped arriving: 408, and the connection closed."""

    status = 408


class PayloadTooLargeError(ApiError):
    """A request body over the one body limit: 413."""

    status = 413


class UnsupportedMediaTypeError(ApiError):
    """A request body that is not JSON: 415."""

    status = 415


class RateLimitError(ApiError):
    """The key's rate limit is spent: 429, with Retry-After."""

    status = 429


class ServiceUnavailableError(ApiError):
    """No data loaded yet, or the database cannot be reached: 503."""

    status = 503


def error_body(
    error: str, message: str, request_id: str, details: dict[str, Any] | None = None
) -> bytes:
    """Encode one Error object."""
    body: dict[str, Any] = {"error": error, "message": message, "requestId": request_id}
    if details:
        body["details"] = details
    return orjson.dumps(body)


def _prefix() -> str:
    return secrets.token_hex(4)


_process = [_prefix()]
_counter = itertools.count()
# A child process must not repeat its parent's ids.
os.register_at_fork(after_in_child=lambda: _process.__setitem__(0, _prefix()))


def new_request_id() -> str:
    """A fresh request id (every response carries one, errors in their body too): unique
    across processes and restarts without a system call each, as a random prefix drawn
    once per process and then a counter."""
    return f"req_{_process[0]}{next(_counter) & 0xFFFFFFFF:08x}"


def error_response(exc: ApiError, request_id: str) -> tuple[int, bytes]:
    """The one place an Error answer is made: its status and its body in the Error shape."""
    return exc.status, error_body(exc.error, exc.message, request_id, exc.details)
