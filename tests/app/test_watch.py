"""The looks at the local files run ahead of the requests (app/watch.py): under steady
traffic a request hardly ever looks at the data file or the key file itself (only when
the timer runs late), a revoke is still seen
within a few ticks, a new key works on its first request, and after a quiet spell the
first request looks for itself."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.store import LOCAL_RECHECK, open_key_store
from edukg.store.base import DataInfo, Principal
from edukg.store.keys import keys_path_for
from edukg.store.sqlite import SqliteStore
from edukg.store.sqlite_keys import SqliteKeyStore
from tests.support import BASE, ServerThread


class _DataFile(SqliteStore):
    """The real store, counting the looks a request's own `info` made."""

    inline = 0

    def info(self) -> DataInfo | None:
        due = self._next_look
        found = super().info()
        self.inline += self._next_look != due
        return found


class _KeyFile(SqliteKeyStore):
    """The real key store, counting the looks a request's own `verify` made."""

    inline = 0

    def verify(self, key: str) -> Principal | None:
        due = self._next_look
        found = super().verify(key)
        self.inline += self._next_look != due
        return found


def _running(app: EdukgApp) -> bool:
    return app.watch is not None and app.watch.running


def _traffic(url: str, key: str, stop: threading.Event, answered: list[int]) -> None:
    with httpx.Client(headers={"x-api-key": key}) as client:
        while not stop.is_set():
            answered.append(client.get(url).status_code)


def test_under_traffic_no_request_looks_and_a_revoke_is_still_seen(tmp_path: Path) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    admin = open_key_store(db)
    alice, bob = admin.create("alice", rate=0), admin.create("bob", rate=0)
    data = _DataFile(db, recheck=LOCAL_RECHECK)
    keys = _KeyFile(keys_path_for(db), create=False, recheck=LOCAL_RECHECK)
    app = EdukgApp(Settings(db=db), store=data, keys=keys)
    server = ServerThread(app).start()
    url = f"{server.url}{BASE}/standards-frameworks"
    stop, answered = threading.Event(), list[int]()
    traffic = threading.Thread(target=_traffic, args=(url, bob, stop, answered), daemon=True)
    try:
        with httpx.Client(headers={"x-api-key": alice}) as client:
            assert client.get(url).status_code == 200
            traffic.start()
            while len(answered) < 200:
                time.sleep(0.01)
            assert _running(app)
            inline, started = data.inline + keys.inline, time.monotonic()
            while len(answered) < 400:
                time.sleep(0.01)
            # Hundreds of requests later, hardly one looked at a file itself: only when the
            # timer ran late (the test's own threads share the interpreter with the server).
            # Without the timer a request would look every 2 ms, dozens of times here.
            looked = data.inline + keys.inline - inline
            due = (time.monotonic() - started) / LOCAL_RECHECK
            assert looked <= max(3, due / 20), (looked, due)
            assert admin.revoke("alice")
            time.sleep(LOCAL_RECHECK * 10)
            assert client.get(url).status_code == 401  # seen by the look ahead
            carol = admin.create("carol", rate=0)
            assert httpx.get(url, headers={"x-api-key": carol}).status_code == 200  # at once
        stop.set()
        traffic.join(timeout=10)
        assert set(answered) == {200}
        time.sleep(LOCAL_RECHECK * 10)
        assert not _running(app)  # quiet: the timer stopped
        assert admin.revoke("bob")  # ... and the next request looks for itself
        assert httpx.get(url, headers={"x-api-key": bob}).status_code == 401
    finally:
        stop.set()
        server.stop()
        admin.close()
