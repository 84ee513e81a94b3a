"""Access control on every route, nasty inputs on every parameter, request limits, logs."""

from __future__ import annotations

import base64
import logging
import socket
import threading
import time
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest

from edukg.adapters.config import Settings
from edukg.adapters.rest import OPERATIONS
from edukg.app.core import EdukgApp
from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid, demo_node_id, demo_skill_id
from edukg.store import open_key_store
from tests.conftest import Api, error_of
from tests.support import BASE, NASTY, ServerThread

OPEN_ROUTES = ["/healthz", "/readyz", "/openapi.json", "/docs"]  # the API's whole allowlist
STATIC_ROUTES = ["/explore", "/explore/standards/x"]  # the explorer page holds no data

# A valid value for every parameter name, on the demo graph.
VALID: dict[str, str] = {
    "caseIdentifierUUID": demo_case_uuid("ms-math", "3.NF.A.1"),
    "standardsFrameworkCaseIdentifierUUID": demo_framework_case_uuid("ms-math"),
    "sourceFrameworkCaseIdentifierUUID": demo_framework_case_uuid("vt-math"),
    "targetFrameworkCaseIdentifierUUID": demo_framework_case_uuid("ms-math"),
    "courseId": demo_node_id("course"),
    "groupingId": demo_node_id("unit1"),
    "lessonId": demo_node_id("lesson3"),
    "activityId": demo_node_id("lesson3-activity1"),
    "assessmentId": demo_node_id("lesson3-practice"),
    "curriculumId": "demo",
    "frameworkIdentifier": demo_skill_id("skills"),
    "academicSubject": "Mathematics",
    "query": "fractions",
    "text": "fractions",
    "from": "demo",  # the demo's release, compared with itself
    "to": "demo",
}


def fill(path: str, overrides: dict[str, str] | None = None) -> str:
    values = {**VALID, **(overrides or {})}
    for name in ("caseIdentifierUUID", "courseId", "groupingId", "lessonId", "activityId",
                 "assessmentId", "curriculumId"):  # fmt: skip
        path = path.replace("{" + name + "}", quote(values[name], safe=":"))
    if "{identifier}" in path:
        ident = (
            demo_skill_id("COL.1") if "durable" in path else "00000000-0000-4000-8000-000000000000"
        )
        path = path.replace("{identifier}", quote(values.get("identifier", ident), safe=":"))
    return path


def required_query(op: Any) -> dict[str, str]:
    return {p.name: VALID[p.name] for p in op.declared if p.required and p.location == "query"}


def test_every_route_refuses_missing_wrong_and_revoked_keys(demo: Api, demo_db: str) -> None:
    keys = open_key_store(demo_db)
    name = f"revoked-{time.monotonic_ns()}"
    dead = keys.create(name, rate=0)
    assert keys.revoke(name)
    keys.close()
    for op in OPERATIONS:
        path = fill(op.path)
        params = required_query(op)
        for key in ("", "ekg_wrong", dead):
            if op.takes_body:
                headers = {"x-api-key": key} if key else {}
                response = demo.http.post(BASE + path, json={"text": "fractions"}, headers=headers)
            else:
                response = demo.get(path, key=key, **params)
            error_of(response, 401, "AuthenticationError")
    mcp = f"{demo.server.url}/mcp"
    for headers in ({}, {"x-api-key": "ekg_wrong"}, {"x-api-key": dead},
                    {"authorization": f"Bearer {dead}"}):  # fmt: skip
        error_of(httpx.post(mcp, json={}, headers=headers), 401, "AuthenticationError")


def test_only_the_allowlist_answers_without_a_key(demo: Api) -> None:
    for path in OPEN_ROUTES + STATIC_ROUTES:
        assert demo.http.get(path).status_code == 200, path
    spec = demo.http.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        (op,) = item.values()
        needs_key = op.get("security") != []
        assert needs_key == (path not in OPEN_ROUTES), path


def _cursor(value: bytes) -> str:
    return base64.urlsafe_b64encode(value).decode()


CURSORS = [
    "!!!not-base64",
    "a",
    _cursor(b"\xff\xfe"),
    _cursor(b"not json"),
    _cursor(b'{"identifier": 1}'),
    _cursor(orjson.dumps({"identifier": "zzz", "data": "x" * 16, "q": "y" * 16})),
]


def _ok_or_clean_error(response: httpx.Response) -> None:
    assert response.status_code in (200, 400, 404, 414), (response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    if response.status_code != 200:
        assert body["error"] in ("ValidationError", "NotFoundError", "URITooLongError")
        assert body["requestId"] == response.headers["x-request-id"]
    # Internals never show (user input may be echoed back in a message, quoted).
    text = response.text.lower()
    for leak in ("traceback", "sqlite3", "psycopg", "operationalerror", 'file "/', "membership m"):
        assert leak not in text, leak


def test_nasty_values_on_every_parameter(demo: Api) -> None:
    for op in OPERATIONS:
        if op.takes_body:  # its body's fields: test_text_alignment's nasty values
            continue
        for param in op.declared:
            values = CURSORS if param.name == "cursor" else NASTY
            for value in values:
                if param.location == "path":
                    path = fill(op.path, {param.name: value})
                    if param.name == "identifier":
                        path = op.path.replace("{identifier}", quote(value, safe=""))
                    response = demo.get(path, **required_query(op))
                else:
                    response = demo.get(fill(op.path), **{**required_query(op), param.name: value})
                _ok_or_clean_error(response)


def test_repeated_and_raw_bytes(demo: Api) -> None:
    for op in OPERATIONS:
        if op.takes_body:  # its body's fields: test_text_alignment's nasty values
            continue
        base = f"{demo.server.url}{BASE}{fill(op.path)}"
        for param in op.declared:
            if param.location != "query" or param.repeat:
                continue
            value = VALID.get(param.name, "1")
            pairs: list[tuple[str, str | int | float | bool | None]] = [
                *required_query(op).items(),
                (param.name, value),
                (param.name, value),
            ]
            response = httpx.get(base, params=pairs, headers={"x-api-key": demo.key})
            error_of(response, 400, "ValidationError")
        raw = httpx.get(base + "?limit=%ff%fe%00", headers={"x-api-key": demo.key})
        error_of(raw, 400, "ValidationError")


def test_overlong_url_is_414(demo: Api) -> None:
    response = demo.get("/standards-frameworks", jurisdiction="x" * 9000)
    error_of(response, 414, "URITooLongError")
    assert demo.get("/standards-frameworks").status_code == 200


def test_huge_headers_and_slow_clients_do_not_stop_service(demo: Api) -> None:
    host, port = "127.0.0.1", demo.server.port
    # An oversized header block: refused or dropped, and the server goes on.
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n")
        try:
            reply = s.recv(200)
        except (ConnectionResetError, TimeoutError):
            reply = b""
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431"), reply
    # Slow clients that dribble a request byte by byte hold only their own connection.
    stop = threading.Event()

    def dribble() -> None:
        with socket.create_connection((host, port), timeout=5) as s:
            for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\n":
                if stop.is_set():
                    return
                s.send(bytes([byte]))
                time.sleep(0.05)

    slow = [threading.Thread(target=dribble, daemon=True) for _ in range(20)]
    for t in slow:
        t.start()
    started = time.monotonic()
    for _ in range(20):
        assert demo.get("/standards-frameworks").status_code == 200
    assert time.monotonic() - started < 5
    stop.set()
    for t in slow:
        t.join(timeout=5)


def test_access_log_has_request_id_and_key_name_never_the_key(
    demo_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    keys = open_key_store(demo_db)
    name = f"logged-{time.monotonic_ns()}"
    key = keys.create(name, rate=0)
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=demo_db, refresh=0, access_log=True))).start()
    try:
        with caplog.at_level(logging.INFO, logger="edukg.access"):
            ok = httpx.get(f"{server.url}{BASE}/standards-frameworks", headers={"x-api-key": key})
            bad = httpx.get(
                f"{server.url}{BASE}/standards-frameworks", headers={"x-api-key": "nope"}
            )
            # A key in the query string is never written down, by name or by its prefix.
            httpx.get(f"{server.url}{BASE}/standards-frameworks?limit=2&key={key}")
            httpx.get(f"{server.url}{BASE}/standards-frameworks?q={key}&token=secret1")
            # Anything shaped like a key, wherever it stands in the path or the query.
            for leaked in (f"?{key}", f"?{key}=1", f"?foo=Bearer%20{key}",
                           f"?query=my+key+{key}", f"?a=1;key={key}", f"/{key}",
                           f"?x={quote(key)}"):  # fmt: skip
                httpx.get(f"{server.url}{BASE}/standards-frameworks{leaked}")
            for path in (f"{BASE}/{key}", f"/explore/{key}", f"/ims/case/v1p1/CFItems/{key}"):
                httpx.get(f"{server.url}{path}")
    finally:
        server.stop()
    lines = [orjson.loads(r.getMessage()) for r in caplog.records if r.name == "edukg.access"]
    assert len(lines) == 14
    assert lines[2]["path"].endswith("?limit=2&key=REDACTED"), lines[2]
    assert lines[3]["path"].endswith("?q=ekg_REDACTED&token=REDACTED"), lines[3]
    assert "secret1" not in caplog.text
    assert key not in caplog.text and key[4:20] not in caplog.text
    assert all("REDACTED" in line["path"] for line in lines[4:]), lines[4:]
    lines = lines[:2]
    first, second = lines
    assert first["requestId"] == ok.headers["x-request-id"] and first["key"] == name
    assert first["status"] == 200 and first["method"] == "GET" and first["ms"] >= 0
    assert second["status"] == 401 and second["key"] is None
    assert bad.status_code == 401
    assert key not in caplog.text and "nope" not in caplog.text


MS_UUID = demo_framework_case_uuid("ms-math")


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/academic-standards", {"standardsFrameworkCaseIdentifierUUID": MS_UUID, "limit": "١٠"}),
        ("/academic-standards", {"standardsFrameworkCaseIdentifierUUID": MS_UUID, "limit": "１０"}),
        (f"/academic-standards/{VALID['caseIdentifierUUID']}/crosswalks", {"minJaccardScore": "१"}),
    ],
)
def test_only_ascii_digits_are_numbers(demo: Api, path: str, params: dict[str, str]) -> None:
    error_of(demo.get(path, **params), 400, "ValidationError")


def test_the_docs_page_allows_only_its_own_script_and_no_framing(demo: Api) -> None:
    response = demo.http.get("/docs")
    policy = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'sha256-" in policy
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    assert response.headers["x-frame-options"] == "DENY"


def test_a_key_with_whitespace_around_it_is_refused_saying_why(demo: Api) -> None:
    with socket.create_connection(("127.0.0.1", demo.server.port), timeout=5) as s:
        s.sendall(
            f"GET {BASE}/standards-frameworks HTTP/1.1\r\nHost: x\r\n"
            f"x-api-key: {demo.key}\u00a0\r\nConnection: close\r\n\r\n".encode("latin-1")
        )
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 401")
    assert b"whitespace" in reply
