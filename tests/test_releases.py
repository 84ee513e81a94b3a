"""Several data releases side by side: keeping, pinning, switching, dropping, migrating."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from edukg.cli import build_demo
from edukg.cli.output import size_text
from edukg.ingest.builder import load
from edukg.ingest.demo import demo_case_uuid, demo_lines
from edukg.ingest.index import index
from edukg.store import ReleaseError, is_postgres, open_releases
from harness.exports import write_export
from harness.processes import edukg
from tests.conftest import BACKENDS, Api, _db_for, _serve, error_of
from tests.support import BASE, SAMPLE

OLD, NEW = "1.0.0", "2.0.0"


@dataclass(frozen=True)
class Edits:
    """What the newer release changed in the sample."""

    removed_uuid: str  # a standard only the older release has
    removed_code: str
    reworded_uuid: str  # a standard whose statement differs
    old_text: str
    new_text: str


def _edit_sample(out: Path) -> Edits:
    """The sample with one leaf standard removed (with its relationships) and one reworded."""
    nodes = (SAMPLE / "nodes.jsonl").read_bytes().splitlines()
    rels = (SAMPLE / "relationships.jsonl").read_bytes().splitlines()
    parents = {orjson.loads(r)["source_identifier"] for r in rels if b'"hasChild"' in r}
    standards = [
        orjson.loads(n) for n in nodes if b'"StandardsFrameworkItem"' in n
    ]  # fmt: skip
    coded = sorted(
        (s for s in standards
         if s["properties"].get("statementCode") and s["properties"].get("caseIdentifierUUID")
         and s["identifier"] not in parents),
        key=lambda s: s["identifier"],
    )  # fmt: skip
    gone, reworded = coded[0], coded[1]
    old_text = reworded["properties"]["description"]
    new_text = "Reworded in release 2: " + old_text
    kept_nodes = []
    for line in nodes:
        record = orjson.loads(line)
        if record["identifier"] == gone["identifier"]:
            continue
        if record["identifier"] == reworded["identifier"]:
            record["properties"]["description"] = new_text
            kept_nodes.append(orjson.dumps(record))
        else:
            kept_nodes.append(line)
    kept_rels = [
        r for r in rels
        if gone["identifier"] not in (orjson.loads(r)["source_identifier"],
                                      orjson.loads(r)["target_identifier"])
    ]  # fmt: skip
    write_export(out, kept_nodes + kept_rels)
    return Edits(
        gone["properties"]["caseIdentifierUUID"],
        gone["properties"]["statementCode"],
        reworded["properties"]["caseIdentifierUUID"],
        old_text,
        new_text,
    )


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Edits]:
    if not (SAMPLE / "nodes.jsonl").is_file():
        pytest.skip(f"the real export sample is not at {SAMPLE}")
    out = tmp_path_factory.mktemp("v2")
    return out, _edit_sample(out)


@pytest.fixture(scope="module", params=BACKENDS)
def two(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    edited: tuple[Path, Edits],
) -> Iterator[tuple[Api, Edits, str]]:
    """A server over a database holding the sample as 1.0.0 and its edit as 2.0.0 (current)."""
    db = _db_for(request.param, "releases", tmp_path_factory, request)
    load([str(SAMPLE)], db, OLD)
    load([str(edited[0])], db, NEW)
    for api in _serve(db):
        yield api, edited[1], db


def std(uuid: str) -> str:
    return f"/academic-standards/{uuid}"


def test_pinning_by_header_and_by_prefix(two: tuple[Api, Edits, str]) -> None:
    api, edits, _ = two
    error_of(api.get(std(edits.removed_uuid)), 404, "NotFoundError")
    by_header = api.http.get(BASE + std(edits.removed_uuid),
                             headers={"x-api-key": api.key, "x-data-version": OLD})  # fmt: skip
    assert by_header.status_code == 200, by_header.text
    assert by_header.headers["x-data-version"] == OLD
    assert by_header.json()["statementCode"] == edits.removed_code
    by_prefix = api.http.get(f"/releases/{OLD}{BASE}{std(edits.removed_uuid)}",
                             headers={"x-api-key": api.key})  # fmt: skip
    assert by_prefix.status_code == 200 and by_prefix.json() == by_header.json()
    # The reworded standard: each release its own text, tag and header; both vary on it.
    now = api.get(std(edits.reworded_uuid))
    then = api.http.get(f"/releases/{OLD}{BASE}{std(edits.reworded_uuid)}",
                        headers={"x-api-key": api.key})  # fmt: skip
    assert now.json()["description"] == edits.new_text
    assert then.json()["description"] == edits.old_text
    assert now.headers["x-data-version"] == NEW and then.headers["x-data-version"] == OLD
    assert now.headers["etag"] != then.headers["etag"]
    assert "X-Data-Version" in now.headers["vary"] and "X-Data-Version" in then.headers["vary"]
    # Naming the current release pins it too; the same release in both places is fine.
    same = api.http.get(f"/releases/{NEW}{BASE}{std(edits.reworded_uuid)}",
                        headers={"x-api-key": api.key, "x-data-version": NEW})  # fmt: skip
    assert same.status_code == 200 and same.json() == now.json()
    # A 304 is per release: the older release's tag does not match the current one.
    again = api.http.get(BASE + std(edits.reworded_uuid),
                         headers={"x-api-key": api.key, "if-none-match": then.headers["etag"]})  # fmt: skip
    assert again.status_code == 200
    # Lists, health and search answer from the pinned release too.
    health = api.http.get(f"/releases/{OLD}/healthz", headers={"x-api-key": api.key}).json()
    assert health["dataVersion"] == OLD
    # Without a key no release is looked up: the current one answers.
    assert api.http.get(f"/releases/{OLD}/healthz").json()["dataVersion"] == NEW


def test_unknown_release_is_404_everywhere(two: tuple[Api, Edits, str]) -> None:
    api, edits, _ = two
    key = {"x-api-key": api.key}
    for path, headers in (
        (BASE + std(edits.reworded_uuid), {**key, "x-data-version": "9.9.9"}),
        (f"/releases/9.9.9{BASE}{std(edits.reworded_uuid)}", key),
        (f"/releases/9.9.9{BASE}/data-versions", key),
        ("/releases/9.9.9/healthz", key),
        ("/releases/9.9.9/explore", key),
        ("/releases/..%2F..%2Fetc/healthz", key),
        (BASE + "/standards-frameworks", {**key, "x-data-version": "../../etc/passwd"}),
    ):
        body = error_of(api.http.get(path, headers=headers), 404, "NotFoundError")
        assert f"{OLD}, {NEW}" in body["message"], body
    mcp = api.http.post("/mcp", headers={**key, "x-data-version": "9.9.9"}, json={})
    error_of(mcp, 404, "NotFoundError")
    case = api.http.get("/releases/9.9.9/ims/case/v1p1/CFDocuments", headers=key)
    error_of(case, 404, "NotFoundError")


def test_header_and_prefix_naming_two_releases_is_400(two: tuple[Api, Edits, str]) -> None:
    api, edits, _ = two
    response = api.http.get(f"/releases/{OLD}{BASE}{std(edits.reworded_uuid)}",
                            headers={"x-api-key": api.key, "x-data-version": NEW})  # fmt: skip
    body = error_of(response, 400, "ValidationError")
    assert OLD in body["message"] and NEW in body["message"]


def test_a_cursor_belongs_to_its_release(two: tuple[Api, Edits, str]) -> None:
    api, _, _ = two
    pinned = {"x-api-key": api.key, "x-data-version": OLD}
    first = api.http.get(
        BASE + "/learning-components",
        params={"limit": 5, "academicSubject": "Mathematics"},
        headers=pinned,
    )
    cursor = first.json()["pagination"]["nextCursor"]
    following = api.http.get(BASE + "/learning-components",
                             params={"limit": 5, "cursor": cursor, "academicSubject": "Mathematics"}, headers=pinned)  # fmt: skip
    assert following.status_code == 200
    for elsewhere in (
        api.get("/learning-components", limit=5, cursor=cursor, academicSubject="Mathematics"),  # the current release
        api.http.get(f"/releases/{NEW}{BASE}/learning-components",
                     params={"limit": 5, "cursor": cursor, "academicSubject": "Mathematics"},
                     headers={"x-api-key": api.key}),
    ):  # fmt: skip
        body = error_of(elsewhere, 400, "ValidationError")
        assert "Restart the walk" in body["message"]


def test_data_versions_lists_the_releases(two: tuple[Api, Edits, str]) -> None:
    api, _, _ = two
    error_of(api.get("/data-versions", key=""), 401, "AuthenticationError")
    body = api.ok("/data-versions")
    assert [r["dataVersion"] for r in body["data"]] == [OLD, NEW]
    assert [r["current"] for r in body["data"]] == [False, True]
    assert body["pagination"] == {"limit": 100, "nextCursor": None, "hasMore": False}
    for record in body["data"]:
        assert list(record) == ["dataVersion", "contentId", "loadedAt", "counts", "current"]
        assert len(record["contentId"]) == 64 and record["counts"]["standard"] > 2000
    assert body["data"][0]["counts"]["standard"] == body["data"][1]["counts"]["standard"] + 1
    paged = api.walk("/data-versions", limit=1)
    assert [r["dataVersion"] for r in paged] == [OLD, NEW]
    # The document describes it, and the answer matches that description.
    spec = api.http.get("/openapi.json").json()
    assert "/data-versions" in {p.removeprefix(BASE) for p in spec["paths"]}
    import jsonschema

    schema = spec["components"]["schemas"]["DataVersion"]
    for record in body["data"]:
        jsonschema.validate(record, schema)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_and_case_answer_from_the_pinned_release(
    two: tuple[Api, Edits, str], anyio_backend: str
) -> None:
    from tests.mcp_client import call, session

    api, edits, _ = two
    async with session(api, {"x-api-key": api.key, "x-data-version": OLD}) as s:
        found = await call(s, "find_standard_statement", code=edits.removed_code)
    async with session(api) as s:
        now = await call(s, "find_standard_statement", code=edits.removed_code)
    assert edits.removed_uuid in {x["caseIdentifierUUID"] for x in found["standards"]}
    assert edits.removed_uuid not in {x["caseIdentifierUUID"] for x in now["standards"]}
    key = {"x-api-key": api.key}
    item = f"/ims/case/v1p1/CFItems/{edits.removed_uuid}"
    assert api.http.get(item, headers=key).status_code == 404
    pinned = api.http.get(f"/releases/{OLD}{item}", headers=key)
    assert pinned.status_code == 200 and pinned.headers["x-data-version"] == OLD
    assert pinned.json()["humanCodingScheme"] == edits.removed_code


_cli = partial(edukg, timeout=120)


def test_use_and_drop_while_serving_under_load(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    db = fresh_db
    build_demo(db)  # release "demo"
    changed = [line.replace(b"Understand a unit fraction", b"Recognize a unit fraction")
               for line in demo_lines()]  # fmt: skip
    load([str(write_export(tmp_path / "v2", changed))], db, NEW)
    load([str(write_export(tmp_path / "v3", list(demo_lines())))], db, "3.0.0")
    api = serve(db)
    uuid = demo_case_uuid("ms-math", "3.NF.A.1")
    failures: list[str] = []
    seen: set[str] = set()
    stop = threading.Event()

    def hammer() -> None:
        with httpx.Client(base_url=api.server.url, timeout=10) as client:
            while not stop.is_set():
                for headers in ({}, {"x-data-version": NEW}):
                    r = client.get(BASE + std(uuid), headers={"x-api-key": api.key, **headers})
                    if r.status_code != 200:
                        failures.append(f"{r.status_code} {r.text[:200]}")
                    elif not headers:
                        seen.add(r.headers["x-data-version"])

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        assert _cli("releases", "use", NEW, "--db", db).returncode == 0
        _until(lambda: api.get(std(uuid)).headers["x-data-version"] == NEW)
        assert api.get(std(uuid)).json()["description"].startswith("Recognize a unit fraction")
        refused = _cli("releases", "drop", NEW, "--db", db)
        assert refused.returncode == 1 and "current" in refused.stderr + refused.stdout
        assert _cli("releases", "drop", "demo", "--db", db).returncode == 0
        assert _cli("releases", "use", "3.0.0", "--db", db).returncode == 0
        _until(lambda: api.get(std(uuid)).headers["x-data-version"] == "3.0.0")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == []
    assert {NEW, "3.0.0"} <= seen
    listed = [
        orjson.loads(x) for x in _cli("releases", "list", "--json", "--db", db).stdout.split()
    ]
    assert [(r["dataVersion"], r["current"]) for r in listed] == [(NEW, False), ("3.0.0", True)]
    assert all(r["sizeBytes"] > 0 for r in listed)
    _until(lambda: api.get(std(uuid), key=None).status_code == 200)
    dropped = api.http.get(f"/releases/demo{BASE}{std(uuid)}", headers={"x-api-key": api.key})
    _until(
        lambda: (
            api.http.get("/releases/demo/healthz", headers={"x-api-key": api.key}).status_code
            == 404
        )
    )
    assert dropped.status_code in (200, 404)  # until the server looks again
    assert _cli("releases", "use", "nope", "--db", db).returncode == 1


def _until(check: Callable[[], bool], seconds: float = 10) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_keep_and_replace(tmp_path: Path, fresh_db: str) -> None:
    db = fresh_db
    export = write_export(tmp_path / "demo", list(demo_lines()))
    for version in ("a", "b"):
        load([str(export)], db, version)
    changed = write_export(tmp_path / "changed", [line.replace(b"unit fraction", b"unit part")
                                                  for line in demo_lines()])  # fmt: skip
    replaced = load([str(changed)], db, "a")  # the same name: replaced, and current
    assert [(r.data_version, r.current) for r in replaced.releases] == [("b", False), ("a", True)]
    summary = load([str(export)], db, "c", keep=2)
    assert summary.dropped == ["b"]
    assert [r.data_version for r in summary.releases] == ["a", "c"]
    assert all(r.size_bytes > 0 for r in summary.releases)
    releases = open_releases(db)
    try:
        assert [r.data_version for r in releases.list()] == ["a", "c"]
        store = releases.store("a")
        assert store is not None
        info = store.info()
        assert info is not None and info.content_id == replaced.content_id
        assert releases.store("nope") is None and releases.store("../x") is None
        stamp = releases.stamp()
        with pytest.raises(ReleaseError, match="current"):
            releases.drop("c")
        with pytest.raises(ReleaseError, match="kept: a, c"):
            releases.use("nope")
        assert releases.stamp() == stamp  # nothing changed
        assert releases.drop("a").data_version == "a"
        assert releases.stamp() != stamp
        assert [(r.data_version, r.current) for r in releases.list()] == [("c", True)]
    finally:
        releases.close()
    if not is_postgres(db):  # only the kept release's lines stay beside the file
        lines = sorted(p.name for p in Path(db).parent.glob("*.lines"))
        assert len(lines) == 1, lines


def test_cli_load_keeps_and_reports_disk(tmp_path: Path, fresh_db: str) -> None:
    export = write_export(tmp_path / "demo", list(demo_lines()))
    for version in ("1", "2", "3"):
        done = _cli("load", str(export), "--db", fresh_db, "--data-version", version,
                    "--keep", "2", "--no-index")  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert "dropped releases (--keep): 1" in done.stdout
    assert "releases kept: 2, 3 (current);" in done.stdout and "on disk" in done.stdout
    bad = _cli("load", str(export), "--db", fresh_db, "--keep", "0", "--no-index")
    assert bad.returncode == 2 and "keep at least" in bad.stdout + bad.stderr  # bad arguments


def test_a_database_made_before_releases_is_migrated(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    """The layout earlier edukg wrote: SQLite, the data file alone beside its lines;
    PostgreSQL, `edukg.current` and the data schemas, no `edukg.releases`."""
    db = fresh_db
    build_demo(db)
    if is_postgres(db):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute("DROP TABLE edukg.releases")
    else:
        for path in Path(db).parent.glob("*.release-*"):
            path.unlink()
        assert not list(Path(db).parent.glob("*.release-*"))
    api = serve(db)
    assert [r["dataVersion"] for r in api.ok("/data-versions")["data"]] == ["demo"]
    load([str(write_export(tmp_path / "v2", list(demo_lines())))], db, NEW)
    listed = api.ok("/data-versions")["data"]
    assert [(r["dataVersion"], r["current"]) for r in listed] == [("demo", False), (NEW, True)]
    uuid = demo_case_uuid("ms-math", "3.NF.A.1")
    pinned = api.http.get(f"/releases/demo{BASE}{std(uuid)}", headers={"x-api-key": api.key})
    assert pinned.status_code == 200 and pinned.headers["x-data-version"] == "demo"
    if not is_postgres(db):
        assert (Path(db).parent / f"{Path(db).name}.release-demo").is_file()


def test_a_new_release_embeds_only_what_changed(tmp_path: Path, fresh_db: str) -> None:
    db = fresh_db
    build_demo(db)
    first = index(db)
    assert first.embedded > 100
    changed = [line.replace(b"Understand a unit fraction", b"Recognize a unit fraction")
               for line in demo_lines()]  # fmt: skip
    load([str(write_export(tmp_path / "v2", changed))], db, NEW)
    second = index(db)
    assert second.embedded == 1 and second.from_cache >= first.embedded - 1  # one text changed
    releases = open_releases(db)
    try:  # the older release keeps its own complete index
        store = releases.store("demo")
        assert store is not None and store.info() is not None
        from edukg.services.search import search_mode

        assert search_mode(store) == search_mode(releases.store(NEW))  # type: ignore[arg-type]
    finally:
        releases.close()


def test_explorer_release_picker(lone_browser: Any, two: tuple[Api, Edits, str]) -> None:
    from tests.browser import enter_key, shot

    api, edits, db = two
    page = lone_browser.new_page(viewport={"width": 1100, "height": 900})
    enter_key(page, api)
    page.wait_for_selector("#release option[value='1.0.0']", state="attached")
    assert page.is_visible("#release")
    page.goto(f"{api.server.url}/explore/standards/{edits.removed_uuid}")
    page.wait_for_selector("text=Could not load this page")
    page.select_option("#release", OLD)
    page.wait_for_selector(".statement")
    assert edits.removed_code in page.inner_text("h1")
    shot(page, "release-picker", "postgres" if is_postgres(db) else "sqlite")
    page.goto(f"{api.server.url}/explore/standards/{edits.reworded_uuid}")
    page.wait_for_selector(".statement")
    assert page.input_value("#release") == OLD  # the choice stays for the tab
    assert "Reworded in release 2" not in page.inner_text(".statement")
    page.select_option("#release", "")
    page.wait_for_selector(".statement:has-text('Reworded in release 2')")


def test_aligning_a_text_reads_the_pinned_release(two: tuple[Api, Edits, str]) -> None:
    api, edits, _ = two
    old = api.http.get(BASE + std(edits.removed_uuid),
                       headers={"x-api-key": api.key, "x-data-version": OLD}).json()  # fmt: skip
    body = {"text": old["description"], "jurisdiction": old["jurisdiction"], "limit": 3}
    headers = {"x-api-key": api.key}
    then = api.http.post(f"/releases/{OLD}{BASE}/alignments", json=body, headers=headers)
    now = api.http.post(BASE + "/alignments", json=body, headers=headers)
    assert then.status_code == now.status_code == 200, (then.text, now.text)
    assert then.headers["x-data-version"] == OLD and now.headers["x-data-version"] == NEW
    assert edits.removed_uuid in [r["caseIdentifierUUID"] for r in then.json()["data"]]
    assert edits.removed_uuid not in [r["caseIdentifierUUID"] for r in now.json()["data"]]


def test_without_a_key_no_release_is_looked_up_or_named(two: tuple[Api, Edits, str]) -> None:
    api, edits, _ = two
    path = BASE + std(edits.reworded_uuid)
    for headers, url in (({"x-data-version": "9.9.9"}, path),
                         ({"x-data-version": OLD}, path),
                         ({}, f"/releases/9.9.9{path}"),
                         ({"x-api-key": "ekg_wrong", "x-data-version": "9.9.9"}, path)):  # fmt: skip
        refused = api.http.get(url, headers=headers)
        error_of(refused, 401, "AuthenticationError")
        assert OLD not in refused.text and NEW not in refused.text
    # With a valid key the unknown release is a 404 that lists the kept ones, as before.
    missing = api.http.get(path, headers={"x-api-key": api.key, "x-data-version": "9.9.9"})
    assert missing.status_code == 404 and OLD in missing.text


def test_sizes_count_shared_files_once(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    export = write_export(tmp_path / "x", list(demo_lines()))
    for version in ("1.0.0", "1.0.1"):  # the same content twice: one lines file for both
        load([str(export)], db, version)
    on_disk = sum(p.stat().st_size for p in tmp_path.glob("s.db*")
                  if p.suffix in (".lines", ".vectors") or ".release-" in p.name)  # fmt: skip
    listed = [
        orjson.loads(x) for x in _cli("releases", "list", "--json", "--db", db).stdout.split()
    ]
    assert abs(sum(r["sizeBytes"] for r in listed) - on_disk) <= 2
    table = _cli("releases", "list", "--db", db).stdout
    assert "2 releases" in table
    lines_file = next(tmp_path.glob("s.db.*.lines"))
    release_file = next(tmp_path.glob("s.db.release-1.0.0"))
    own = release_file.stat().st_size
    dropped = _cli("releases", "drop", "1.0.0", "--db", db)
    assert dropped.returncode == 0 and lines_file.exists()  # the other release reads it
    assert size_text(own) in dropped.stderr + dropped.stdout, dropped.stderr
    assert "1 release," in _cli("releases", "list", "--db", db).stdout


def _held(paths: list[str]) -> list[str]:
    """Which of `paths` this process still has open or mapped (deleted or not)."""
    held = Path("/proc/self/maps").read_text()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            held += "\n" + os.readlink(fd)
        except OSError:
            continue
    return [p for p in paths if p in held]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
def test_a_dropped_release_is_let_go_within_seconds(tmp_path: Path) -> None:
    db = str(tmp_path / "d.db")
    build_demo(db)  # release "demo", indexed
    changed = [line.replace(b"Understand a unit fraction", b"Recognize a unit fraction")
               for line in demo_lines()]  # fmt: skip
    load([str(write_export(tmp_path / "v2", changed))], db, NEW)
    index(db)
    for api in _serve(db):
        old = {"x-api-key": api.key, "x-data-version": "demo"}
        found = api.http.get(BASE + "/academic-standards/search", headers=old,
                             params={"query": "unit fraction", "jurisdiction": "Multi-State"})  # fmt: skip
        assert found.status_code == 200
        files = [str(p) for p in tmp_path.glob("d.db.release-demo")]
        files += [str(p) for p in tmp_path.glob("d.db.*.vectors")]
        assert _held(files), "the pinned release was never opened"
        assert _cli("releases", "drop", "demo", "--db", db).returncode == 0
        gone = [f for f in files if not Path(f).exists()]
        assert gone
        deadline = time.monotonic() + 8
        while _held(gone):
            assert time.monotonic() < deadline, f"still held: {_held(gone)}"
            time.sleep(0.2)


def test_a_cursor_used_with_another_release_names_both(two: tuple[Api, Edits, str]) -> None:
    api, _, _ = two
    pinned = {"x-api-key": api.key, "x-data-version": OLD}
    first = api.http.get(BASE + "/standards-frameworks", headers=pinned, params={"limit": 1})
    cursor = first.json()["pagination"]["nextCursor"]
    assert cursor
    elsewhere = api.get("/standards-frameworks", limit=1, cursor=cursor)  # the current: NEW
    body = error_of(elsewhere, 400, "ValidationError")
    assert f"walks data release '{OLD}'" in body["message"] and repr(NEW) in body["message"]
    assert body["details"] == {"reason": "stale_cursor", "cursorRelease": OLD, "release": NEW}
    same = api.http.get(BASE + "/standards-frameworks", headers=pinned,
                        params={"limit": 1, "cursor": cursor})  # fmt: skip
    assert same.status_code == 200


def test_explorer_what_changed_reads_as_people_name_things(
    lone_browser: Any, two: tuple[Api, Edits, str]
) -> None:
    from tests.browser import enter_key, shot

    api, edits, db = two
    page = lone_browser.new_page(viewport={"width": 1100, "height": 900})
    enter_key(page, api)
    page.goto(f"{api.server.url}/explore/changes?from={OLD}&to={NEW}")
    page.wait_for_selector("#modified table.values")
    # Grouped by change: the removed standard by its code, in the Removed section only.
    removed = page.inner_text("#removed")
    assert edits.removed_code in removed
    assert edits.removed_code not in page.inner_text("#added")
    # Its relationships went with it: their ends by code and name, not UUID pairs.
    for item in page.locator("#removed li").all():
        text = item.inner_text()
        if "→" in text:
            assert edits.removed_code in text
    assert "→" in removed
    # The reworded standard: old and new side by side, the new words marked.
    before = page.inner_text("#modified td.before")
    after = page.inner_text("#modified td.after")
    assert before.strip() == edits.old_text and after.strip() == edits.new_text
    inserted = " ".join(page.locator("#modified td.after ins").all_inner_texts())
    assert inserted == "Reworded in release 2:"
    assert page.locator("#modified td.before del").count() == 0
    shot(page, "what-changed-values", "postgres" if is_postgres(db) else "sqlite")
