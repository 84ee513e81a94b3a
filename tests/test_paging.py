"""Keyset paging: integrity of walks, and cursors refused when they do not fit."""

from __future__ import annotations

import base64

import orjson
import pytest

from edukg.ingest.demo import demo_framework_case_uuid
from tests.conftest import Api, error_of

MS = demo_framework_case_uuid("ms-math")


@pytest.mark.parametrize("limit", [1, 7, 50, 1000])
def test_walk_yields_each_item_once_in_byte_order(demo: Api, limit: int) -> None:
    everything = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, limit=1000)
    assert everything["pagination"]["hasMore"] is False
    walked = demo.walk("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, limit=limit)
    assert walked == everything["data"]
    ids = [r["identifier"] for r in walked]
    assert ids == sorted(ids, key=str.encode)
    assert len(set(ids)) == len(ids) == 69


def test_pages_report_limit_and_more(demo: Api) -> None:
    first = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, limit=10)
    assert len(first["data"]) == 10
    assert first["pagination"]["limit"] == 10
    assert first["pagination"]["hasMore"] is True
    assert isinstance(first["pagination"]["nextCursor"], str)
    default = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS)
    assert default["pagination"]["limit"] == 100


def test_limit_may_change_between_pages(demo: Api) -> None:
    first = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, limit=5)
    second = demo.ok(
        "/academic-standards",
        standardsFrameworkCaseIdentifierUUID=MS,
        limit=20,
        cursor=first["pagination"]["nextCursor"],
    )
    assert first["data"][-1]["identifier"] < second["data"][0]["identifier"]


def test_grade_filtered_walk(demo: Api) -> None:
    walked = demo.walk(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, gradeLevel="4", limit=3
    )
    whole = demo.ok(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, gradeLevel="4", limit=1000
    )
    assert walked == whole["data"]
    assert len(walked) > 3


def test_cursor_with_other_filters_is_refused(demo: Api) -> None:
    first = demo.ok(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, gradeLevel="3", limit=2
    )
    cursor = first["pagination"]["nextCursor"]
    response = demo.get(
        "/academic-standards",
        standardsFrameworkCaseIdentifierUUID=MS,
        gradeLevel="4",
        cursor=cursor,
    )
    body = error_of(response, 400, "ValidationError")
    assert "Restart the walk" in body["message"]
    other_op = demo.get("/learning-components", academicSubject="Mathematics", cursor=cursor)
    error_of(other_op, 400, "ValidationError")


def _b64(value: bytes) -> str:
    return base64.urlsafe_b64encode(value).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64 at all!!",
        "%%%",
        _b64(b"garbage that is not json"),
        _b64(b"[1, 2, 3]"),
        _b64(orjson.dumps({"identifier": "x"})),
        _b64(orjson.dumps({"identifier": 5, "data": "x", "q": "y"})),
        _b64(orjson.dumps({"identifier": "zzz", "data": "0" * 16, "q": "0" * 16})),
        "é",
    ],
)
def test_forged_cursors_are_refused(demo: Api, cursor: str) -> None:
    response = demo.get(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, cursor=cursor
    )
    error_of(response, 400, "ValidationError")


def test_empty_cursor_means_first_page(demo: Api) -> None:
    body = demo.ok(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, cursor="", limit=3
    )
    first = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, limit=3)
    assert body == first


def test_a_cursor_with_its_identifier_edited_is_refused(demo: Api) -> None:
    first = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, limit=3)
    cursor = first["pagination"]["nextCursor"]
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    last = first["data"][-1]["identifier"].encode()
    assert last in raw  # the identifier is in there, readable but not editable
    edited = _b64(raw.replace(last, first["data"][0]["identifier"].encode())).rstrip("=")
    response = demo.get(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, cursor=edited
    )
    body = error_of(response, 400, "ValidationError")
    assert "not a cursor this service issued" in body["message"]
    assert (
        demo.get(
            "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, cursor=cursor
        ).status_code
        == 200
    )
