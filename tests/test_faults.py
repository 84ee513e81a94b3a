"""Faults under load: reloads while serving, a database that goes away, shutdown."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.ingest.builder import load
from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid, demo_lines
from edukg.store import open_key_store
from harness.exports import write_export
from harness.processes import EDUKG, free_port, stop, wait_for
from tests.conftest import Api, error_of
from tests.support import BASE, ServerThread

NF1 = demo_case_uuid("ms-math", "3.NF.A.1")


def version_lines(n: int) -> list[bytes]:
    """The demo graph, with 3.NF.A.1's statement marked as version n."""
    return [
        x.replace(b"Understand a unit fraction", f"[v{n}] Understand a unit fraction".encode())
        for x in demo_lines()
    ]


def test_hot_reload_under_load(tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]) -> None:
    exports = [write_export(tmp_path / f"v{n}", version_lines(n)) for n in range(4)]
    load([str(exports[0])], fresh_db, "0")
    api = serve(fresh_db)
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    done = threading.Event()

    def hammer() -> None:
        client = httpx.Client(base_url=api.server.url, headers={"x-api-key": api.key}, timeout=10)
        deadline = time.monotonic() + 30
        while not done.is_set() and time.monotonic() < deadline:
            r = client.get(f"{BASE}/academic-standards/{NF1}")
            version = r.headers.get("x-data-version")
            if r.status_code != 200:
                problems.append(f"{r.status_code} {r.text[:200]}")
            elif not r.json()["description"].startswith(f"[v{version}]"):
                problems.append(f"body of another version than {version}")
            outcomes[f"one:{version}"] += 1
            # A paged walk: pages of one version, or a clear 400 telling to restart.
            first = client.get(f"{BASE}/learning-components",
                               params={"academicSubject": "Mathematics", "limit": 5})  # fmt: skip
            cursor = first.json()["pagination"]["nextCursor"]
            nxt = client.get(f"{BASE}/learning-components", params={
                "academicSubject": "Mathematics", "limit": 5, "cursor": cursor})  # fmt: skip
            if nxt.status_code == 400 and "Restart the walk" in nxt.json()["message"]:
                outcomes["walk:restart"] += 1
            elif nxt.status_code == 200:
                same = nxt.headers["x-data-version"] == first.headers["x-data-version"]
                outcomes["walk:ok" if same else "walk:mixed"] += 1
            else:
                problems.append(f"walk {nxt.status_code} {nxt.text[:200]}")
        client.close()

    workers = [threading.Thread(target=hammer) for _ in range(4)]
    for t in workers:
        t.start()
    try:
        for n in (1, 2, 3):
            time.sleep(0.3)
            load([str(exports[n])], fresh_db, str(n))
        time.sleep(0.3)
    finally:
        done.set()
        for t in workers:
            t.join(timeout=30)
    assert problems == []
    assert outcomes["walk:mixed"] == 0
    assert sum(v for k, v in outcomes.items() if k.startswith("one:")) > 20
    assert outcomes["one:3"] > 0, outcomes  # the last version was served


def _find_pg_bin() -> Path | None:
    for root in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (root / "initdb").is_file():
            return root
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@dataclass
class Cluster:
    """A private PostgreSQL cluster: its URL, and ways to stop, start, freeze and thaw it."""

    url: str
    halt: Callable[[], None]
    start: Callable[[], None]
    data: Path

    def _signal(self, sig: signal.Signals) -> None:
        """`sig` to the postmaster, then to each of its processes (a hung host)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, sig)
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    os.kill(int(stat.parent.name), sig)

    def freeze(self) -> None:
        """Every process of the cluster stopped: connections accepted, nothing answered."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Every process of the cluster running again."""
        self._signal(signal.SIGCONT)


@pytest.fixture
def private_postgres() -> Iterator[Cluster]:
    """A PostgreSQL cluster of this test's own, on its own port; never the shared one."""
    bindir = _find_pg_bin()
    if bindir is None:
        pytest.skip("initdb and pg_ctl are not installed")
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres system user to run a private cluster as")
    base = Path(tempfile.mkdtemp(prefix="edukg-pg-"))
    os.chown(base, user.pw_uid, user.pw_gid)
    data, port = base / "data", free_port()

    def as_postgres(*cmd: str) -> subprocess.CompletedProcess[str]:
        runner = [] if os.geteuid() == user.pw_uid else ["runuser", "-u", "postgres", "--"]
        return subprocess.run([*runner, *cmd], capture_output=True, text=True, check=False)

    made = as_postgres(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                       "-E", "UTF8")  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"initdb failed here: {made.stderr.strip()[:300]}")
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"

    def start() -> None:
        ran = as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                          str(base / "log"), "start")  # fmt: skip
        assert ran.returncode == 0, ran.stderr + (base / "log").read_text()

    def halt() -> None:
        as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")

    start()
    cluster = Cluster(f"postgresql://postgres@127.0.0.1:{port}/postgres", halt, start, data)
    try:
        yield cluster
    finally:
        with contextlib.suppress(OSError, ValueError):
            cluster.thaw()
        halt()
        shutil.rmtree(base, ignore_errors=True)


def test_database_outage_gives_503_and_recovers(private_postgres: Cluster) -> None:
    url, halt, start = private_postgres.url, private_postgres.halt, private_postgres.start
    build_demo(url)
    keys = open_key_store(url)
    key = keys.create("outage", rate=0)
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=url, refresh=0))).start()
    client = httpx.Client(base_url=server.url, headers={"x-api-key": key}, timeout=15)
    path = f"{BASE}/academic-standards/{NF1}"
    cached = f"{BASE}/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.2')}"
    try:
        assert client.get(cached).status_code == 200
        halt()
        for _ in range(3):
            started = time.monotonic()
            body = error_of(client.get(path), 503, "ServiceUnavailableError")
            assert "database" in body["message"]
            assert time.monotonic() - started < 6  # fails fast, does not hang
        error_of(client.get("/readyz"), 503, "ServiceUnavailableError")
        assert client.get(cached).status_code == 200  # from memory, without the database
        start()
        deadline = time.monotonic() + 30
        while client.get(path).status_code != 200:  # recovers by itself
            assert time.monotonic() < deadline, "service did not recover"
            time.sleep(0.5)
        assert client.get("/readyz").status_code == 200
    finally:
        client.close()
        server.stop()


def _timed(client: httpx.Client, path: str, key: str | None = None) -> tuple[int, float]:
    started = time.monotonic()
    response = client.get(path, headers={"x-api-key": key} if key else {})
    return response.status_code, time.monotonic() - started


def test_a_frozen_database_costs_a_request_its_deadline_at_most(private_postgres: Cluster) -> None:
    url = private_postgres.url
    build_demo(url)
    keys = open_key_store(url)
    key, unseen = keys.create("frozen", rate=0), keys.create("unseen", rate=0)
    keys.close()
    wrong = "ekg_" + "x" * 40
    server = ServerThread(EdukgApp(Settings(db=url))).start()
    client = httpx.Client(base_url=server.url, timeout=60)
    cached = f"{BASE}/academic-standards/{NF1}"
    fresh = f"{BASE}/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.2')}"
    try:
        assert _timed(client, cached, key)[0] == _timed(client, cached, key)[0] == 200
        assert _timed(client, cached, wrong)[0] == 401  # known wrong from now on
        assert _timed(client, "/healthz", key)[0] == 200  # loads the model, if installed
        private_postgres.freeze()
        try:
            time.sleep(1.5)  # the heartbeat is late within BEAT + LATE
            times = {
                "healthz": _timed(client, "/healthz"),
                "healthz keyed": _timed(client, "/healthz", key),
                "readyz": _timed(client, "/readyz"),
                "known wrong key": _timed(client, cached, wrong),
                "cached answer": _timed(client, cached, key),
                "uncached answer": _timed(client, fresh, key),
                "unseen key": _timed(client, cached, unseen),
            }
            ready = client.get("/readyz").json()
        finally:
            private_postgres.thaw()
        statuses = {name: status for name, (status, _) in times.items()}
        assert statuses == {
            "healthz": 200, "healthz keyed": 200, "readyz": 503, "known wrong key": 401,
            "cached answer": 200, "uncached answer": 503, "unseen key": 503,
        }  # fmt: skip
        slow = {name: round(took, 2) for name, (_, took) in times.items() if took > 3.0}
        assert slow == {}  # nothing waits past the 2 s deadline
        needless = ("healthz", "healthz keyed", "readyz", "known wrong key", "cached answer")
        waited = {name: round(times[name][1], 2) for name in needless if times[name][1] > 1.0}
        assert waited == {}, "none of these needs the database once it is known frozen"
        assert ready["details"]["database"] == "not answering"
        time.sleep(0.5)  # PostgreSQL answers again: the heartbeat hears it at once
        assert _timed(client, fresh, key)[0] == 200  # the first request after recovery
        assert _timed(client, cached, unseen)[0] == 200
        assert client.get("/readyz").status_code == 200
    finally:
        client.close()
        server.stop()


def test_graceful_shutdown_finishes_in_flight_requests(tmp_path: Path) -> None:
    db = str(tmp_path / "g.db")
    build_demo(db)
    keys = open_key_store(db)
    key = keys.create("graceful", rate=0)
    keys.close()
    port = free_port()
    proc = subprocess.Popen(
        [*EDUKG, "serve", "--db", db, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", proc)
        # A large answer to a client that reads slowly: still on its way when the stop
        # signal arrives, and delivered whole before the server exits.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        framework = demo_framework_case_uuid("ms-math")
        sock.sendall(
            f"GET {BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={framework}"
            f"&limit=1000 HTTP/1.1\r\nHost: x\r\nx-api-key: {key}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        sock.close()
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                     .split(b":")[1])  # fmt: skip
        assert len(body) == length > 40_000
        # uvicorn shuts down gracefully, then re-raises the signal it caught.
        assert proc.wait(timeout=20) in (0, -signal.SIGTERM)
        assert proc.stdout is not None
        assert "Finished server process" in proc.stdout.read()
    finally:
        stop(proc)


def test_a_damaged_record_is_never_sent_as_json(tmp_path: Path) -> None:
    db = tmp_path / "edukg.db"
    build_demo(str(db))
    keys = open_key_store(str(db))
    key = keys.create("damaged")
    keys.close()
    target = demo_case_uuid("ms-math", "3.NF.A.1").encode()
    good = b'"caseIdentifierUUID":"' + target
    data = db.read_bytes()
    assert good in data
    db.write_bytes(data.replace(good, b'"caseIdentifierUUID"!"' + target))  # same length
    server = ServerThread(EdukgApp(Settings(db=str(db), refresh=0))).start()
    try:
        url = f"{server.url}{BASE}/academic-standards/{target.decode()}"
        response = httpx.get(url, headers={"x-api-key": key})
        error_of(response, 500, "InternalServerError")
        assert "damaged" in response.json()["message"]
    finally:
        server.stop()


def test_a_damaged_file_is_reported_by_readyz(tmp_path: Path) -> None:
    db = tmp_path / "edukg.db"
    build_demo(str(db))
    open_key_store(str(db)).close()
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for n in range(2, 12):  # the headers of a few b-tree pages
        data[n * page : n * page + 12] = b"\xff" * 12
    db.write_bytes(bytes(data))
    server = ServerThread(EdukgApp(Settings(db=str(db), refresh=0))).start()
    try:
        with httpx.Client(base_url=server.url) as client:
            client.get("/healthz")  # opens the file, which starts the check
            deadline = time.monotonic() + 20
            while True:
                ready = client.get("/readyz")
                if ready.status_code == 503:
                    verdict = str(ready.json()["details"]["integrity"])
                    if verdict != "checking":
                        break
                assert time.monotonic() < deadline, "the damage was never reported"
                time.sleep(0.1)
        error_of(ready, 503, "ServiceUnavailableError")
        assert verdict == "damaged"  # no details without a key
        key = open_key_store(str(db)).create(f"ops-{time.monotonic_ns()}")
        keyed = httpx.get(f"{server.url}/readyz", headers={"x-api-key": key})
        assert str(keyed.json()["details"]["integrity"]).startswith("damaged: ")
    finally:
        server.stop()
