"""The loaded data releases (an edukg extension: the hosted API serves one release)."""

from __future__ import annotations

from dataclasses import dataclass

from edukg.adapters.params import Cursor, Limit
from edukg.adapters.rest.base import Call, Operation
from edukg.adapters.schemas import page_schema
from edukg.services import releases as service


@dataclass(frozen=True, slots=True, kw_only=True)
class ListDataVersions:
    """Parameters of listDataVersions."""

    limit: Limit = 100
    cursor: Cursor = None


def _list(call: Call[ListDataVersions]) -> bytes:
    assert call.releases is not None  # the app always passes its releases
    return call.page(service.data_versions(call.releases, call.after(), call.params.limit))


OPERATIONS = (
    Operation(
        path="/data-versions",
        operation_id="listDataVersions",
        summary="Loaded data releases",
        description=(
            "edukg extension. The data releases this server keeps, oldest load first; the"
            " current one answers requests that name none. Any other answers requests with"
            " the header `X-Data-Version: X` or under the path prefix `/releases/X`."
        ),
        handler=_list,
        response_schema=page_schema("DataVersion"),
        params=ListDataVersions,
        tags=("Data releases",),
    ),
)
