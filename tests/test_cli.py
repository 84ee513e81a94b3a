"""The command line as a user runs it: real processes, real ports, real HTTP."""

from __future__ import annotations

import http.server
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.ingest.demo import demo_lines
from edukg.store import open_key_store
from harness import processes
from harness.exports import write_export
from harness.processes import EDUKG, free_port, stop
from tests.support import SAMPLE, ServerThread


def said_within(proc: subprocess.Popen[str], wanted: str, seconds: float = 90) -> list[str]:
    """The process's output lines up to the first holding `wanted` (fails after `seconds`)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
            if wanted in line:
                return
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while (line := lines.get(timeout=max(0.1, deadline - time.monotonic()))) is not None:
        seen.append(line)
        if wanted in line:
            return seen
    raise AssertionError(f"{wanted!r} never said: {''.join(seen)[-2000:]}")


def _quickstart(db: Path) -> str:
    """Run `edukg quickstart`, check its key works, stop it; the key."""
    port = free_port()
    proc = subprocess.Popen(
        [*EDUKG, "quickstart", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        said = said_within(proc, "curl ")
        key = next(line.split()[2] for line in said if line.strip().startswith("API key:"))
        assert key.startswith("ekg_")
        base = f"http://127.0.0.1:{port}"
        # The curl line is printed once the server answers: it works as soon as it is read.
        response = httpx.get(
            f"{base}/knowledge-graph/v0/standards-frameworks", headers={"x-api-key": key}
        )
        assert response.status_code == 200 and len(response.json()["data"]) == 3
        return key
    finally:
        stop(proc)


def test_quickstart_prints_a_working_key_and_serves(tmp_path: Path) -> None:
    first = _quickstart(tmp_path / "q.db")
    second = _quickstart(tmp_path / "q.db")  # the demo key is replaced, not piled up
    assert first != second
    keys = open_key_store(str(tmp_path / "q.db"))
    try:
        assert keys.verify(first) is None and keys.verify(second) is not None
        assert [k.name for k in keys.list() if k.revoked_at is None] == ["quickstart"]
    finally:
        keys.close()


def _serving(db: str, port: int, tmp: Path, *flags: str) -> subprocess.Popen[str]:
    tmp.mkdir()
    return subprocess.Popen(
        [*EDUKG, "serve", "--port", str(port), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "EDUKG_DB": db, "TMPDIR": str(tmp)},
    )


def test_serve_with_workers_and_a_base_path(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    build_demo(db)
    key, scraper = (
        subprocess.run(
            [*EDUKG, "keys", "create", name, *flags], capture_output=True, text=True, check=True,
            env={**os.environ, "EDUKG_DB": db},
        ).stdout.splitlines()[-1]
        for name, flags in (("w", ()), ("scraper", ("--metrics",)))
    )  # fmt: skip
    port, other = free_port(), free_port()
    proc = _serving(db, port, tmp_path / "a", "--workers", "2", "--base-path", "/kg")
    second = _serving(db, other, tmp_path / "b")  # another server of the same database
    try:
        base = f"http://127.0.0.1:{port}"
        said = said_within(proc, "is serving")[-1]
        said_within(second, "is serving")
        assert f"serving http://127.0.0.1:{port}: the API at {base}/kg" in said
        for _ in range(6):  # several requests, so both workers are likely to answer
            response = httpx.get(f"{base}/kg/standards-frameworks", headers={"x-api-key": key})
            assert response.status_code == 200
        for _ in range(2):
            assert httpx.get(f"http://127.0.0.1:{other}/knowledge-graph/v0/standards-frameworks",
                             headers={"x-api-key": key}).status_code == 200  # fmt: skip
        assert httpx.get(f"{base}/knowledge-graph/v0/standards-frameworks").status_code == 404
        # Metrics add up every worker's figures, whichever worker is scraped, and only
        # this server's: each keeps its own private directory.
        time.sleep(1.5)  # each worker writes its figures every second
        counted = 'edukg_requests_total{entrance="api",operation="listFrameworks",status="200"}'
        for _ in range(3):
            scraped = httpx.get(f"{base}/metrics", headers={"authorization": f"Bearer {scraper}"})
            assert scraped.status_code == 200, scraped.text
            assert f"{counted} 6.0" in scraped.text
        scraped = httpx.get(f"http://127.0.0.1:{other}/metrics", headers={"x-api-key": scraper})
        assert f"{counted} 2.0" in scraped.text
        (private,) = (tmp_path / "a").glob("edukg-metrics-*")
        assert private.stat().st_mode & 0o777 == 0o700 and not private.is_symlink()
        assert len(list(private.glob("worker-*.json"))) == 2
        assert not (tmp_path / "w.db.metrics").exists()
    finally:
        try:
            stop(proc)
        finally:
            stop(second)
    assert not list((tmp_path / "a").glob("edukg-metrics-*"))  # removed as it stopped
    assert not list((tmp_path / "b").glob("edukg-metrics-*"))


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain HTTP server on loopback serving a directory."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_load_from_urls(tmp_path: Path, file_server: tuple[str, Path]) -> None:
    url, root = file_server
    write_export(root / "v2.3.4", list(demo_lines()), gz=True)
    db = tmp_path / "u.db"
    done = subprocess.run(
        [
            *EDUKG, "load", f"{url}/v2.3.4/nodes.jsonl.gz", f"{url}/v2.3.4/relationships.jsonl.gz",
            "--db", str(db), "--no-index",
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Loaded data version 2.3.4" in done.stdout
    assert "StandardsFrameworkItem" in done.stdout and "dangling" in done.stdout
    assert not list(tmp_path.glob(".edukg-download-*")), "downloads were not cleaned up"
    missing = subprocess.run(
        [*EDUKG, "load", f"{url}/nope/nodes.jsonl", "--db", str(db)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert missing.returncode == 1 and "HTTP 404" in missing.stderr
    assert "unchanged" in missing.stderr


def test_failed_load_exits_nonzero_naming_the_line(tmp_path: Path) -> None:
    export = write_export(tmp_path / "in", list(demo_lines()))
    with open(export / "relationships.jsonl", "ab") as f:
        f.write(b"{oops\n")
    lines = len((export / "relationships.jsonl").read_bytes().splitlines())
    done = subprocess.run(
        [*EDUKG, "load", str(export), "--db", str(tmp_path / "f.db")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert f"relationships.jsonl:{lines}:" in done.stderr.replace("\n", "")
    assert not (tmp_path / "f.db").exists()


def test_load_indexes_unless_told_not_and_index_resumes(tmp_path: Path) -> None:
    export = write_export(tmp_path / "v1.0.0", list(demo_lines()))
    db = str(tmp_path / "i.db")

    def edukg(*args: str) -> subprocess.CompletedProcess[str]:
        return processes.edukg(*args, "--db", db)

    nothing = edukg("index")
    assert nothing.returncode == 1 and "nothing is loaded" in nothing.stderr
    skipped = edukg("load", str(export), "--no-index")
    assert skipped.returncode == 0 and "Semantic index" not in skipped.stderr
    assert not list(tmp_path.glob("i.db.*.vectors"))
    built = edukg("index")
    assert built.returncode == 0, built.stderr
    assert "texts embedded (onnx int8)" in built.stderr
    assert len(list(tmp_path.glob("i.db.*.vectors"))) == 1
    again = edukg("index")
    assert again.returncode == 0 and "complete" in again.stderr
    reloaded = edukg("load", str(export))  # the same data: its vectors are still complete
    assert reloaded.returncode == 0 and "Semantic index complete" in reloaded.stderr


def test_index_works_when_the_model_cache_cannot_be_written(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the ONNX path needs the `index` extra")
    export = write_export(tmp_path / "v1.0.0", list(demo_lines()))
    db = str(tmp_path / "f.db")
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("the int8 model cannot be written under a file")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocked)}
    done = subprocess.run(
        [*EDUKG, "load", str(export), "--db", db, "--wait-index"], capture_output=True,
        text=True, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "building the model in memory" in done.stderr
    assert "texts embedded (onnx int8)" in done.stderr


@pytest.mark.parametrize("command", ["use", "drop"])
def test_a_release_name_that_is_a_path_is_a_usage_error(tmp_path: Path, command: str) -> None:
    db = tmp_path / "edukg.db"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    for name in ("../x", "../outside.txt", "../../etc/passwd", "a/b"):
        done = subprocess.run(
            [*EDUKG, "releases", command, name, "--db", str(db)],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, (name, done.stderr)
        assert "not a data version" in done.stderr and "Traceback" not in done.stderr
    assert outside.read_text() == "keep me"


def test_serve_refuses_a_database_that_is_not_there(
    tmp_path: Path, postgres: Callable[[str], str]
) -> None:
    missing_pg = postgres("present").rsplit("/", 1)[0] + "/edukg_no_such_database"
    for db, said in ((str(tmp_path / "nope.db"), "no database at"),
                     (missing_pg, "does not exist: create it first")):  # fmt: skip
        done = subprocess.run([*EDUKG, "serve", "--db", db, "--port", str(free_port())],
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert (
            said in done.stderr and "edukg load" in done.stderr and "Traceback" not in done.stderr
        )
    assert not (tmp_path / "nope.db").exists()


def test_help_reads_like_a_manual() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*EDUKG, *args], capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip

    bare = run()
    assert bare.returncode == 2 and "serve" in bare.stderr and "Exit codes" in bare.stderr
    top = run("--help")
    assert "--db DB" in top.stdout and "GLOBAL_DB" not in top.stdout
    serve = run("serve", "--help").stdout
    assert "Serve the loaded data over HTTP." in serve
    assert "the TCP port to listen on (default: 8000)" in serve
    assert "(default: /knowledge-graph/v0)" in serve
    for command in (("load",), ("keys", "create"), ("generate",), ("releases", "use"), ("export",)):
        page = run(*command, "--help").stdout
        description = page.split("\n\n")[1]
        assert description[:1].isupper() and description.rstrip().endswith("."), command
    assert "the same seed writes the same export (default: 0)" in run("generate", "--help").stdout


@pytest.mark.sample
def test_a_load_returns_while_its_index_is_built_and_servers_pick_it_up(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the index needs the `index` extra")
    db = tmp_path / "bg.db"
    # Output captured as a script would: the load's end must not wait for the index.
    done = subprocess.run([*EDUKG, "load", str(SAMPLE), "--db", str(db), "--data-version",
                           "1.0.0"], capture_output=True, text=True, check=False, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "building in the background" in done.stderr
    log = tmp_path / "bg.db.index.log"
    assert log.exists() and not list(tmp_path.glob("bg.db.*.vectors"))
    key = open_key_store(str(db)).create("watch")
    server = ServerThread(EdukgApp(Settings(db=str(db)))).start()
    seen: list[dict[str, object]] = []
    try:
        with httpx.Client(base_url=server.url, headers={"x-api-key": key}, timeout=30) as client:
            deadline = time.monotonic() + 240
            while True:
                search = client.get("/healthz").json()["details"]["search"]
                if search["semantic"]:
                    break  # picked up by this running server, without a restart
                seen.append(search.get("indexing") or {})
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.2)
    finally:
        server.stop()
    progress = [s for s in seen if s]
    assert progress, "the progress was never shown"
    assert all(0 <= int(s["done"]) <= int(s["total"]) for s in progress)  # type: ignore[call-overload]
    assert any(s["etaSeconds"] is not None for s in progress) or len(progress) < 3
    assert "texts embedded" in log.read_text()


def test_every_command_on_a_missing_database_fails_alike(tmp_path: Path) -> None:
    missing = str(tmp_path / "nothing-here.db")
    for args in (["crosswalk", "a:b", "c:d"], ["coverage", "x", "a:b"], ["releases", "list"],
                 ["diff", "1", "2"], ["export", str(tmp_path / "out")], ["index"],
                 ["keys", "list"], ["keys", "revoke", "k"], ["keys", "create", "k"]):  # fmt: skip
        done = subprocess.run([*EDUKG, *args, "--db", missing], capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 1, (args, done.returncode, done.stderr)  # the one rule
        assert "Traceback" not in done.stderr
    assert not Path(missing).exists()
    # A directory is named for what it is (it used to say "no such file").
    done = subprocess.run([*EDUKG, "releases", "list", "--db", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1 and "a directory, not a database file" in done.stderr
    helped = subprocess.run([*EDUKG, "--help"], capture_output=True, text=True, check=True)
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    rule = "a command on a database that does not exist or holds nothing"
    assert rule in " ".join(helped.stdout.split()) and rule in " ".join(readme.split())
