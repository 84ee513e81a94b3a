"""What an operation is: its path, parameters, response and handler, in one place.

The route table, request validation and the OpenAPI document are all made from
these declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from edukg.adapters.params import Param
from edukg.services import graph as service
from edukg.services.pagination import decode_cursor, page_body, query_key
from edukg.store.base import DataInfo, Store


@dataclass
class Call:
    """One validated request, as a handler sees it."""

    operation_id: str
    values: dict[str, Any]
    store: Store
    info: DataInfo
    cursor_secret: bytes  # signs the cursors this request issues, checks the one it got

    def after(self) -> str | None:
        """The identifier to continue after, from this request's cursor."""
        return decode_cursor(
            self.values.get("cursor"), self.info.content_id, self.query_key(), self.cursor_secret
        )

    def query_key(self) -> str:
        """The hash of this request's filters, which its cursors carry."""
        filters = {k: v for k, v in self.values.items() if k not in ("limit", "cursor")}
        return query_key(self.operation_id, filters)

    def page(self, page: service.Page, key: bytes = b"data") -> bytes:
        """The paged-list envelope around a page of records."""
        return page_body(
            page.rows, page.limit, self.info.content_id, self.query_key(), self.cursor_secret, key
        )


@dataclass(frozen=True)
class Operation:
    """A GET operation under the API's base path."""

    path: str
    operation_id: str
    summary: str
    handler: Callable[[Call], bytes]
    response_schema: dict[str, Any]
    params: tuple[Param, ...] = ()
    description: str = ""
    tags: tuple[str, ...] = ()
    not_found: bool = False  # whether the operation answers 404 for an unknown record
    statuses: tuple[int, ...] = field(default=(200, 400, 401, 405, 429, 500, 503))


def ref(name: str) -> dict[str, Any]:
    """A reference to one of the document's component schemas."""
    return {"$ref": f"#/components/schemas/{name}"}
