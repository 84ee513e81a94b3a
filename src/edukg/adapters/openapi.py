"""edukg's own OpenAPI document, made from the operation declarations."""

from __future__ import annotations

from typing import Any

from edukg import __version__
from edukg.adapters.rest.base import Operation
from edukg.adapters.schemas import component_schemas

_ERROR_TEXT = {
    304: "Not modified: the If-None-Match ETag is current",
    400: "Invalid request: a malformed, missing, repeated or out-of-range parameter, or a "
    "cursor this service did not issue or that belongs to other filters or older data",
    401: "Missing, unknown or revoked API key",
    404: "Not found",
    405: "Method not allowed: the API answers GET (and HEAD), and POST on its one operation"
    " with a body",
    413: "The request body is larger than 256 KiB",
    415: "The request body is not JSON (Content-Type: application/json)",
    414: "The URL is too long",
    431: "The request headers are too large",
    429: "Rate limit exceeded: see the Retry-After header",
    500: "Internal server error (no internals are disclosed)",
    503: "No data loaded yet, or the database cannot be reached",
}

_DATA_VERSION_HEADER = {
    "description": "The loaded export release (the `--data-version` of the load)",
    "schema": {"type": "string"},
}
_REQUEST_ID_HEADER = {
    "description": "The request's id, as in error bodies",
    "schema": {"type": "string"},
}


_RATE_HEADERS = {
    name: {"description": text, "schema": {"type": "integer"}}
    for name, text in (
        ("RateLimit-Limit", "Requests the key may make at once (its burst)"),
        ("RateLimit-Remaining", "Requests left before the limit applies"),
        ("RateLimit-Reset", "Seconds until the key's allowance is full again"),
    )
}


def _error_response(status: int) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-Id": _REQUEST_ID_HEADER}
    if status == 429:
        headers["Retry-After"] = {"description": "Seconds to wait", "schema": {"type": "integer"}}
    return {
        "description": _ERROR_TEXT[status],
        "headers": headers,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _operation(op: Operation[Any]) -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": {
            "description": "OK",
            "headers": {
                "X-Data-Version": _DATA_VERSION_HEADER,
                "X-Request-Id": _REQUEST_ID_HEADER,
                "ETag": {
                    "description": "Strong validator of this response",
                    "schema": {"type": "string"},
                },
                **_RATE_HEADERS,
            },
            "content": {"application/json": {"schema": op.response_schema}},
        }
    }
    extra = (413, 415) if op.takes_body else (304,)
    statuses = sorted({*op.statuses, *extra, 414, 431, *((404,) if op.not_found else ())})
    for status in statuses:
        if status == 304:
            responses["304"] = {"description": _ERROR_TEXT[304]}
        elif status != 200:
            responses[str(status)] = _error_response(status)
    parameters = []
    for p in () if op.takes_body else op.declared:
        entry: dict[str, Any] = {
            "name": p.name,
            "in": p.location,
            "required": p.required or p.location == "path",
            "description": p.description,
            "schema": p.schema(),
        }
        if p.repeat:
            entry.update(style="form", explode=True)
        parameters.append(entry)
    found = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "description": op.description,
        "tags": list(op.tags),
        "parameters": parameters,
        "responses": responses,
    }
    if op.takes_body:
        found["requestBody"] = _request_body(op)
    return found


def _request_body(op: Operation[Any]) -> dict[str, Any]:
    """A POST operation's JSON body: its declared parameters as the object's fields."""
    properties = {}
    for p in op.declared:
        schema = p.schema()
        if p.repeat:  # one value, or a list of them (as a GET takes one or several)
            schema = {"oneOf": [schema["items"], schema]}
        elif "$ref" in schema:  # a reference takes no sibling keywords in OpenAPI 3.0
            schema = {"allOf": [schema]}
        properties[p.name] = {**schema, "description": p.description}
    body = {
        "type": "object",
        "additionalProperties": False,
        "required": [p.name for p in op.declared if p.required],
        "properties": properties,
    }
    return {"required": True, "content": {"application/json": {"schema": body}}}


def build_openapi(
    base_path: str,
    operations: tuple[Operation[Any], ...],
    service_paths: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The OpenAPI 3.0 document of this server: `operations` under `base_path`, and the
    path items of the service paths the route table documents."""
    paths: dict[str, Any] = {}
    for op in operations:
        paths.setdefault(base_path + op.path, {})[op.method.lower()] = _operation(op)
    paths.update(service_paths or {})
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "edukg: Knowledge Graph REST API",
            "version": __version__,
            "description": "A self-hosted server compatible with the Learning Commons "
            "Knowledge Graph REST API. Every operation under the base path needs an "
            "`x-api-key` header.",
        },
        "servers": [{"url": "/"}],
        "security": [{"ApiKeyAuth": []}],
        "paths": paths,
        "components": {
            "schemas": component_schemas(),
            "securitySchemes": {
                "ApiKeyAuth": {"type": "apiKey", "in": "header", "name": "x-api-key"}
            },
        },
    }


# The service paths' descriptions; the app's route table lists them with their handlers.
READY_PATH: dict[str, Any] = {
    "get": {
        "operationId": "ready",
        "summary": "Readiness: data loaded, databases reachable",
        "description": "No key needed. 200 when ready to serve, 503 (with the failed "
        "checks in `details`) otherwise.",
        "tags": ["Service"],
        "security": [],
        "parameters": [],
        "responses": {
            "200": {
                "description": "Ready",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            "503": _error_response(503),
        },
    }
}

HEALTH_PATH: dict[str, Any] = {
    "get": {
        "operationId": "health",
        "summary": "Liveness and loaded data version",
        "description": "No key needed. 200 once data is loaded, 503 before.",
        "tags": ["Service"],
        "security": [],
        "parameters": [],
        "responses": {
            "200": {
                "description": "Data is loaded",
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Health"}}
                },
            },
            "503": _error_response(503),
        },
    }
}

# The service paths the route table documents, with their OpenAPI path items.
SERVICE_PATHS: dict[str, dict[str, Any]] = {"/readyz": READY_PATH, "/healthz": HEALTH_PATH}
