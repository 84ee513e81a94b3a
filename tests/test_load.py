"""The loader: inputs, typing, bad input, failed loads, atomic switch, export round trip."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from edukg.cli import build_demo
from edukg.ingest.builder import load
from edukg.ingest.demo import demo_case_uuid, demo_lines
from edukg.ingest.errors import LoadError
from edukg.ingest.reader import guess_version
from edukg.store import is_postgres, open_store
from harness.exports import served_state, write_export
from harness.processes import EDUKG, stop
from tests.conftest import Api, error_of
from tests.support import SAMPLE


def node(identifier: str, label: str = "StandardsFrameworkItem", **props: Any) -> bytes:
    return orjson.dumps(
        {"type": "node", "identifier": identifier, "labels": [label], "properties": props}
    )


def rel(identifier: str, label: str, source: str, target: str, **props: Any) -> bytes:
    return orjson.dumps(
        {
            "type": "relationship",
            "identifier": identifier,
            "label": label,
            "properties": props,
            "source_identifier": source,
            "target_identifier": target,
            "source_labels": [],
            "target_labels": [],
        }
    )


def records(lines: list[bytes]) -> dict[str, Any]:
    return {orjson.loads(x)["identifier"]: orjson.loads(x) for x in lines}


@pytest.fixture
def demo_export(tmp_path: Path) -> Path:
    return write_export(tmp_path / "export", list(demo_lines()))


def test_directory_files_and_gzip_load_alike(tmp_path: Path, demo_export: Path) -> None:
    by_dir = load([str(demo_export)], str(tmp_path / "a.db"), "1.0.0")
    by_files = load(
        [str(demo_export / "relationships.jsonl"), str(demo_export / "nodes.jsonl")],
        str(tmp_path / "b.db"),
    )
    zipped = write_export(tmp_path / "gz", list(demo_lines()), gz=True)
    by_gz = load([str(zipped)], str(tmp_path / "c.db"))
    assert by_dir.node_counts == by_files.node_counts == by_gz.node_counts
    assert by_dir.relationship_counts == by_gz.relationship_counts
    assert by_dir.content_id == by_gz.content_id
    assert by_dir.data_version == "1.0.0"
    assert by_files.data_version.endswith("-" + by_files.content_id[:12])  # named by content
    assert by_files.named_by_content and not by_dir.named_by_content


def test_version_from_path_or_url() -> None:
    assert guess_version(["/data/kg/v1.11.0/"]) == "1.11.0"
    assert guess_version(["https://example.org/exports/v1.6.0/nodes.jsonl.gz"]) == "1.6.0"
    assert guess_version(["/data/latest"]) is None


def test_unknown_labels_kept_dangling_and_duplicates_reported(tmp_path: Path) -> None:
    a, b = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"
    lines = [
        node(a, caseIdentifierUUID="10000000-0000-4000-8000-000000000001", description="first"),
        node(a, caseIdentifierUUID="10000000-0000-4000-8000-000000000001", description="second"),
        node(b, label="SomethingNew", x="y"),
        rel("e1", "hasChild", a, "missing-node"),
        rel("e2", "inventedRelation", a, b),
        rel("e2", "inventedRelation", a, b),
    ]
    db = str(tmp_path / "x.db")
    summary = load([str(write_export(tmp_path / "in", lines))], db)
    assert summary.node_counts == {"SomethingNew": 1, "StandardsFrameworkItem": 1}
    assert summary.relationship_counts == {"hasChild": 1, "inventedRelation": 1}
    assert summary.dangling == 1
    assert summary.duplicate_nodes == 1
    assert summary.duplicate_relationships == 1
    store = open_store(db)
    found = store.by_case_uuid("10000000-0000-4000-8000-000000000001", ("standard",))
    assert found is not None
    assert orjson.loads(found.doc)["description"] == "second"
    # hasChildren counts only children that exist
    assert orjson.loads(found.doc)["hasChildren"] is False
    store.close()


def test_the_last_line_of_a_record_decides_what_is_served(tmp_path: Path, fresh_db: str) -> None:
    """Re-read under another label, a record is served as that (or not at all); a parent
    read before its child's relationship still says it has children."""
    a, b, c = (f"00000000-0000-0000-0000-00000000000{x}" for x in "abc")
    case = "10000000-0000-4000-8000-00000000000"
    lines = [
        node(a, caseIdentifierUUID=f"{case}1", description="a standard"),
        node(b, caseIdentifierUUID=f"{case}2", description="a standard at first"),
        node(c, caseIdentifierUUID=f"{case}3", description="then a component"),
        node(b, label="SomethingNew", x="y"),  # no longer a standard: not served
        node(c, label="LearningComponent", description="a component now"),
        node("child", caseIdentifierUUID=f"{case}4", description="a child"),
        rel("e1", "hasChild", a, "child"),
    ]
    load([str(write_export(tmp_path / "in", lines))], fresh_db)
    store = open_store(fresh_db)
    try:
        parent = store.by_case_uuid(f"{case}1", ("standard",))
        assert parent is not None
        assert orjson.loads(parent.doc)["hasChildren"] is True
        assert store.by_case_uuid(f"{case}2", ("standard",)) is None
        assert store.by_case_uuid(f"{case}3", ("standard",)) is None
        component = store.by_identifier(c, "component")
        assert component is not None
        assert orjson.loads(component.doc)["description"] == "a component now"
        child = store.by_case_uuid(f"{case}4", ("standard",))
        assert child is not None and orjson.loads(child.doc)["hasChildren"] is False
    finally:
        store.close()


def test_typed_values(tmp_path: Path) -> None:
    lines = [
        node(
            "n1",
            caseIdentifierUUID="10000000-0000-4000-8000-000000000001",
            gradeLevel='["K","1"]',
        ),
        node("f1", label="StandardsFramework", isCurrent="false",
             caseIdentifierUUID="10000000-0000-4000-8000-000000000002"),
        node("c1", label="LearningComponent", examples='["one","two"]'),
    ]  # fmt: skip
    db = str(tmp_path / "t.db")
    load([str(write_export(tmp_path / "in", lines))], db)
    store = open_store(db)
    item = store.by_identifier("n1", "standard")
    framework = store.by_identifier("f1", "framework")
    component = store.by_identifier("c1", "component")
    assert item
    assert framework
    assert component
    assert orjson.loads(item.doc)["gradeLevel"] == ["K", "1"]
    assert orjson.loads(framework.doc)["isCurrent"] is False
    assert orjson.loads(component.doc)["examples"] == ["one", "two"]
    store.close()


BAD_LINES: list[tuple[bytes, str]] = [
    (b'{"type":"node","identifier":"x","labels":["A"]', "not valid JSON"),
    (b"[1,2]", "one JSON object"),
    (b'{"type":"node","labels":["A"],"properties":{}}', "'identifier'"),
    (b'{"type":"node","identifier":"x","labels":[],"properties":{}}', "'labels'"),
    (b'{"type":"relationship","identifier":"r","source_identifier":"a","target_identifier":"b"}',
     "'label'"),
    (b'{"type":"relationship","identifier":"r","label":"hasChild","source_identifier":"a"}',
     "'target_identifier'"),
    (b'{"type":"edge","identifier":"r"}', "'type'"),
    (b'{"type":"node","identifier":"x","labels":["A"],"properties":{"gradeLevel":"[3"}}',
     "gradeLevel"),
    (b'{"type":"node","identifier":"x","labels":["A"],"properties":{"isCurrent":"maybe"}}',
     "isCurrent"),
    (b'{"type":"relationship","identifier":"r","label":"x","source_identifier":"a",'
     b'"target_identifier":"b","properties":{"jaccard":"high"}}', "jaccard"),
]  # fmt: skip


def leftovers(db: str) -> list[str]:
    """Anything an unfinished load left behind: build files, or build schemas."""
    if is_postgres(db):
        import psycopg

        with psycopg.connect(db) as conn:
            current = conn.execute("SELECT schema_name, previous FROM edukg.current").fetchone()
            names = [r[0] for r in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'edukg_data_%'"
            )]  # fmt: skip
        return [n for n in names if current is None or n not in current]
    return [p.name for p in Path(db).parent.glob(Path(db).name + ".building-*")]


@pytest.fixture
def served_demo(fresh_db: str) -> str:
    """A database on each backend, serving the demo graph."""
    build_demo(fresh_db)
    return fresh_db


@pytest.mark.parametrize(("bad", "says"), BAD_LINES)
def test_bad_line_stops_the_load_naming_file_and_line(
    tmp_path: Path, served_demo: str, bad: bytes, says: str
) -> None:
    before = served_state(served_demo)
    export = write_export(tmp_path / "in", list(demo_lines()))
    nodes = (export / "nodes.jsonl").read_bytes().splitlines()
    nodes.insert(3, bad)
    (export / "nodes.jsonl").write_bytes(b"\n".join(nodes) + b"\n")
    with pytest.raises(LoadError) as caught:
        load([str(export)], served_demo)
    message = str(caught.value)
    assert says in message
    assert f"{export / 'nodes.jsonl'}:4:" in message
    assert served_state(served_demo) == before
    assert leftovers(served_demo) == []


def test_truncated_gzip_fails_cleanly(tmp_path: Path, served_demo: str) -> None:
    before = served_state(served_demo)
    export = write_export(tmp_path / "in", list(demo_lines()), gz=True)
    data = (export / "nodes.jsonl.gz").read_bytes()
    (export / "nodes.jsonl.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError, match=r"nodes\.jsonl\.gz"):
        load([str(export)], served_demo)
    assert served_state(served_demo) == before
    assert leftovers(served_demo) == []


def test_missing_source_and_empty_export(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load([str(tmp_path / "nowhere")], str(tmp_path / "x.db"))
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "nodes.jsonl").write_text("")
    with pytest.raises(LoadError, match=r"relationships\.jsonl"):
        load([str(tmp_path / "half")], str(tmp_path / "x.db"))
    (tmp_path / "half" / "relationships.jsonl").write_text("\n")
    with pytest.raises(LoadError, match="no node records"):
        load([str(tmp_path / "half")], str(tmp_path / "x.db"))
    assert not (tmp_path / "x.db").exists()


def _loading(db: str, tmp_path: Path) -> bool:
    """Whether a load into `db` is under way (its build file exists, or it holds the lock)."""
    if is_postgres(db):
        import psycopg

        with psycopg.connect(db) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            ).fetchone()
        return bool(row and row[0])
    return bool(leftovers(db))


def test_killed_load_leaves_served_data_and_cleans_up(tmp_path: Path, served_demo: str) -> None:
    before = served_state(served_demo)
    # An export that never ends: the loader blocks reading it, mid-load, until killed.
    fifo = tmp_path / "nodes.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [*EDUKG, "load", str(fifo), "--db", served_demo],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _feed_then_kill(proc, fifo, served_demo, tmp_path)
    finally:
        stop(proc)  # a failed wait above must not leave the load running
    assert served_state(served_demo) == before
    # The next load cleans up whatever the killed one left, and succeeds. (PostgreSQL
    # frees the killed session's load lock when it notices the dropped connection.)
    export = str(write_export(tmp_path / "in", list(demo_lines())))
    deadline = time.monotonic() + 10
    while True:
        try:
            load([export], served_demo)
            break
        except LoadError as exc:
            if "another load" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    assert leftovers(served_demo) == []
    assert served_state(served_demo)[0] == before[0]  # the same content, loaded again


def _feed_then_kill(
    proc: subprocess.Popen[bytes], fifo: Path, served_demo: str, tmp_path: Path
) -> None:
    """Give the load a few lines through its pipe, then kill it mid-build."""
    deadline = time.monotonic() + 20
    while True:  # wait for the loader to open the pipe, without blocking on a dead one
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert proc.poll() is None, "the loader exited before reading"
            assert time.monotonic() < deadline, "the loader never opened its source"
            time.sleep(0.05)
    os.set_blocking(fd, True)
    with open(fd, "wb") as writer:
        for line in list(demo_lines())[:50]:
            writer.write(line + b"\n")
        writer.flush()
        while not _loading(served_demo, tmp_path):
            assert time.monotonic() < deadline, "the load never started building"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)


def test_full_disk_fails_cleanly(tmp_path: Path) -> None:
    """SQLite: the build file fills the disk; the served file beside it is untouched."""
    demo_db = str(tmp_path / "demo.db")
    build_demo(demo_db)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small filesystem")
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    # Room for the served file and a little more: a second build cannot fit.
    size_kb = Path(demo_db).stat().st_size // 1024 + 256
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        db = mnt / "served.db"
        shutil.copy(demo_db, db)
        before = db.read_bytes()
        with pytest.raises(LoadError, match="could not be written"):
            load([str(write_export(tmp_path / "in", list(demo_lines())))], str(db))
        assert db.read_bytes() == before
        assert not list(mnt.glob("served.db.building-*"))
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_export_round_trip_demo(tmp_path: Path, served_demo: str) -> None:
    out = tmp_path / "out"
    subprocess.run(
        [*EDUKG, "export", str(out), "--db", served_demo],
        check=True,
        capture_output=True,
    )
    original = list(demo_lines())
    exported = (out / "nodes.jsonl").read_bytes().splitlines()
    exported += (out / "relationships.jsonl").read_bytes().splitlines()
    assert records(exported) == records(original)


@pytest.mark.sample
def test_export_round_trip_sample(tmp_path: Path, sample_db: str) -> None:
    out = tmp_path / "out"
    subprocess.run([*EDUKG, "export", str(out), "--db", sample_db], check=True)
    for name in ("nodes.jsonl", "relationships.jsonl"):
        original = records((SAMPLE / name).read_bytes().splitlines())
        again = records((out / name).read_bytes().splitlines())
        assert again == original
    # and the exported files load again to the same content
    summary = load([str(out)], str(tmp_path / "again.db"))
    assert sum(summary.node_counts.values()) == 7395
    assert sum(summary.relationship_counts.values()) == 7753


def test_hot_switch_in_a_running_server(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    db = fresh_db
    build_demo(db)
    api = serve(db)
    code = demo_case_uuid("ms-math", "3.NF.A.1")
    assert api.ok(f"/academic-standards/{code}")["statementCode"] == "3.NF.A.1"
    first = api.ok("/learning-components", academicSubject="Mathematics", limit=5)
    # A new version in which 3.NF.A.1 says something else.
    changed = [
        line.replace(b"Understand a unit fraction", b"Recognize a unit fraction")
        for line in demo_lines()
    ]
    load([str(write_export(tmp_path / "v2", changed))], db, "2.0.0")
    response = api.get(f"/academic-standards/{code}")
    assert response.headers["x-data-version"] == "2.0.0"
    assert response.json()["description"].startswith("Recognize a unit fraction")
    assert api.http.get("/healthz").json()["dataVersion"] == "2.0.0"
    stale = api.get(
        "/learning-components",
        academicSubject="Mathematics",
        cursor=first["pagination"]["nextCursor"],
    )
    body = error_of(stale, 400, "ValidationError")
    assert "Restart the walk" in body["message"]


def test_server_without_data_answers_503(fresh_db: str, serve: Callable[[str], Api]) -> None:
    db = fresh_db
    api = serve(db)
    error_of(api.http.get("/healthz"), 503, "ServiceUnavailableError")
    error_of(api.get("/standards-frameworks"), 503, "ServiceUnavailableError")
    build_demo(db)
    assert api.http.get("/healthz").status_code == 200
    assert api.ok("/standards-frameworks")["data"]


def test_postgres_build_files_go_whatever_happens(
    tmp_path: Path, postgres: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PostgreSQL load builds in a private SQLite file under $TMPDIR: removed after a
    load, after a failed one, and (by the next load) after a killed one."""
    served_demo = postgres("buildfiles")
    builds = tmp_path / "tmp"
    builds.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(builds))
    export = write_export(tmp_path / "in", list(demo_lines()))
    load([str(export)], served_demo)
    assert list(builds.iterdir()) == []
    broken = write_export(tmp_path / "broken", [*list(demo_lines())[:5], b"{not json"])
    with pytest.raises(LoadError):
        load([str(broken)], served_demo)
    assert list(builds.iterdir()) == []
    # What a killed load leaves: a build directory named for a process that is gone.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (builds / f"edukg-pg-build-{dead}-x").mkdir()
    (builds / f"edukg-pg-build-{dead}-x" / "build.db").write_bytes(b"half")
    load([str(export)], served_demo)
    assert list(builds.iterdir()) == []
