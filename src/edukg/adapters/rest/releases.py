"""The loaded data releases (an edukg extension: the hosted API serves one release)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from edukg.adapters.params import Cursor, Limit, Param
from edukg.adapters.rest.base import RELEASES, Call, Family, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.shapes import ChangeKind, RecordType
from edukg.services import releases as service
from edukg.store.changes_base import ChangeFilter


@dataclass(frozen=True, slots=True, kw_only=True)
class ListDataVersions:
    """Parameters of listDataVersions."""

    limit: Limit = 100
    cursor: Cursor = None


def _list(call: Call[ListDataVersions]) -> bytes:
    assert call.releases is not None  # the app always passes its releases
    return call.page(service.data_versions(call.releases, call.after(), call.params.limit))


# Their answers change with the releases kept.
_RELEASES = Family(("Data releases",), varies=frozenset((RELEASES,)))

OPERATIONS: tuple[Operation[Any], ...] = (
    _RELEASES.of(
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
    ),
)


_RELEASE = "a kept release, e.g. 1.11.0 (GET data-versions lists them)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ListChanges:
    """Parameters of listChanges."""

    from_: Annotated[str, Param(f"The older release: {_RELEASE}", max_length=64)]
    to: Annotated[str, Param(f"The newer release: {_RELEASE}", max_length=64)]
    type: Annotated[RecordType | None, Param("Only nodes, or only relationships")] = None
    label: Annotated[
        str | None, Param("Only records of this export label, e.g. hasStandardAlignment",
                          max_length=100)
    ] = None  # fmt: skip
    change: Annotated[ChangeKind | None, Param("Only added, removed or modified records")] = None
    identifier: Annotated[
        str | None, Param("Only the record with this identifier", max_length=256)
    ] = None
    includeValues: Annotated[
        bool, Param("Add `before` and `after`: the property values (for a modified record,"
                    " the changed ones)")
    ] = False  # fmt: skip
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSummary:
    """Parameters of getChangeSummary."""

    from_: Annotated[str, Param(f"The older release: {_RELEASE}", max_length=64)]
    to: Annotated[str, Param(f"The newer release: {_RELEASE}", max_length=64)]


def _changes(call: Call[ListChanges]) -> bytes:
    p = call.params
    assert call.changes is not None  # the app always passes its change feed
    where = ChangeFilter(p.type, p.label, p.change, p.identifier)
    # A walk of the changes between two releases reads those two, whatever is current:
    # its cursors outlive a load or a switch of the current release.
    pair = call.changes.pair_content(p.from_, p.to)
    page = call.changes.page(p.from_, p.to, where, call.after(pair), p.limit, p.includeValues)
    return call.page(page, content=pair)


def _summary(call: Call[ChangeSummary]) -> bytes:
    assert call.changes is not None
    return call.changes.summary(call.params.from_, call.params.to)


_CHANGES_ABOUT = (
    "edukg extension. What changed from release `from` to release `to`, record by record:"
    " a node is the same node when its identifier is; a relationship when its label,"
    " source and target are. Only the export's own properties are compared, typed."
    " Nodes first, then relationships, in a stable order. Until the changes of a pair are"
    " computed (at the load that made `to` current; any other pair on its first request,"
    " in the background) the answer is 503 with Retry-After."
)
OPERATIONS += (
    _RELEASES.of(
        path="/changes",
        operation_id="listChanges",
        summary="What changed between two releases",
        description=_CHANGES_ABOUT,
        handler=_changes,
        response_schema=page_schema("Change"),
        params=ListChanges,
        not_found=True,
    ),
    _RELEASES.of(
        path="/changes/summary",
        operation_id="getChangeSummary",
        summary="How many records changed between two releases, by label",
        description="edukg extension. Counts of added, removed and modified records per"
        " export label (see listChanges).",
        handler=_summary,
        response_schema=ref("ChangeSummary"),
        params=ChangeSummary,
        not_found=True,
    ),
)
