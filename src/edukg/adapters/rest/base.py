"""What an operation is: its path, parameters, response and handler, in one place.

The route table, request validation and the OpenAPI document are all made from
these declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from edukg.adapters.params import Param, declared
from edukg.services import graph as service
from edukg.services.changes import ChangeFeed
from edukg.services.pagination import decode_cursor, page_body, query_key
from edukg.store.base import DataInfo, Releases, Store

P = TypeVar("P")

RANKING = "ranking"
ALIGNMENT = "alignment"  # the alignment engine's version (services.alignment.version)
RELEASES = "releases"
# Tokens of the key's bucket a search takes: it costs about five lookups.
SEARCH_COST = 5


@dataclass
class Call(Generic[P]):
    """One validated request, as a handler sees it: `params` is the operation's typed
    parameter object; `values` the same values by name, for cursors and ETags."""

    operation_id: str
    params: P
    values: dict[str, Any]
    store: Store
    info: DataInfo
    cursor_secret: bytes  # signs the cursors this request issues, checks the one it got
    releases: Releases | None = None  # the server's kept releases (listDataVersions)
    changes: ChangeFeed | None = None  # the changes between them (listChanges)

    def after(self, content: str | None = None) -> str | None:
        """The identifier to continue after, from this request's cursor; `content` names
        what the walk reads when it is not the served release (default: that release)."""
        release = "" if content else self.info.data_version
        return decode_cursor(self.values.get("cursor"), content or self.info.content_id,
                             self.query_key(), self.cursor_secret, release)  # fmt: skip

    def query_key(self) -> str:
        """The hash of this request's filters, which its cursors carry."""
        filters = {k: v for k, v in self.values.items() if k not in ("limit", "cursor")}
        return query_key(self.operation_id, filters)

    def page(self, page: service.Page, key: bytes = b"data", content: str | None = None) -> bytes:
        """The paged-list envelope around a page of records (`content` as for `after`)."""
        release = "" if content else self.info.data_version
        return page_body(page.rows, page.limit, content or self.info.content_id,
                         self.query_key(), self.cursor_secret, key, release, page.note)  # fmt: skip


@dataclass(frozen=True)
class Operation(Generic[P]):
    """An operation under the API's base path: a GET with query parameters, or (`method`
    POST) one whose parameters are the fields of a JSON body."""

    path: str
    operation_id: str
    summary: str
    handler: Callable[[Call[P]], bytes]
    response_schema: dict[str, Any]
    params: type[P]  # a dataclass of `Annotated` fields (see adapters.params)
    description: str = ""
    tags: tuple[str, ...] = ()
    not_found: bool = False  # whether the operation answers 404 for an unknown record
    # Tokens a request takes from its key's bucket; above 1 it is expensive work (run off
    # the event loop, on the bounded work pool).
    cost: int = 1
    # Tokens added per this many characters of a body's `text` (0: none): work that grows
    # with the text costs in proportion to it.
    text_cost_chars: int = 0
    # What the answer depends on besides the data and the parameters (part of its ETag
    # and response-cache key): RANKING, the search ranking in force (it changes when an
    # index completes); RELEASES, the kept releases.
    varies: frozenset[str] = frozenset()
    method: str = "GET"
    statuses: tuple[int, ...] = field(default=(200, 400, 401, 405, 429, 500, 503))

    @property
    def takes_body(self) -> bool:
        """Whether the parameters come in a JSON body."""
        return self.method == "POST"

    @property
    def declared(self) -> tuple[Param, ...]:
        """The parameters, as the OpenAPI document and request parsing read them."""
        return declared(self.params)


@dataclass(frozen=True)
class Family:
    """What a family of operations shares (search, alignment, releases): their tags, their
    price and what their answers vary with, said once; `of` makes each member."""

    tags: tuple[str, ...]
    cost: int = 1
    text_cost_chars: int = 0
    varies: frozenset[str] = frozenset()
    not_found: bool = False

    def of(
        self,
        path: str,
        operation_id: str,
        summary: str,
        handler: Callable[[Call[P]], bytes],
        response_schema: dict[str, Any],
        params: type[P],
        description: str = "",
        method: str = "GET",
        tags: tuple[str, ...] | None = None,
        not_found: bool | None = None,
    ) -> Operation[P]:
        """One operation of the family (`tags` and `not_found`: its own, where they differ)."""
        return Operation(
            path, operation_id, summary, handler, response_schema, params, description,
            self.tags if tags is None else tags,
            self.not_found if not_found is None else not_found,
            self.cost, self.text_cost_chars, self.varies, method,
        )  # fmt: skip


def ref(name: str) -> dict[str, Any]:
    """A reference to one of the document's component schemas."""
    return {"$ref": f"#/components/schemas/{name}"}
