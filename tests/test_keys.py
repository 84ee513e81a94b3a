"""API keys: the CLI, storage as digests, immediate revocation, survival across loads."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from edukg.cli import build_demo
from edukg.store import open_key_store
from edukg.store.keys import KeyNameError, keys_path_for
from harness.processes import edukg
from tests.conftest import Api, error_of


def test_cli_create_prints_the_key_alone_on_the_last_line(fresh_db: str) -> None:
    db = fresh_db
    made = open_key_store(db)  # a key store: keys are not made for a path that holds none
    made.list()
    made.close()
    created = edukg("keys", "create", "alice", "--db", db)
    assert created.returncode == 0, created.stderr
    key = created.stdout.splitlines()[-1]
    assert key.startswith("ekg_")
    assert len(key) > 40
    assert " " not in key
    listed = edukg("keys", "list", "--db", db)
    assert "alice" in listed.stdout
    assert key[-4:] in listed.stdout
    assert key not in listed.stdout
    assert key[:-4] not in listed.stdout
    again = edukg("keys", "create", "alice", "--db", db)
    assert again.returncode == 1
    assert "exists" in again.stderr
    assert edukg("keys", "revoke", "alice", "--db", db).returncode == 0
    assert edukg("keys", "revoke", "alice", "--db", db).returncode == 1
    assert edukg("keys", "create", "alice", "--db", db).returncode == 0  # name free again


def test_keys_are_stored_as_digests_only(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    keys = open_key_store(db)
    key = keys.create("bob")
    principal = keys.verify(key)
    assert principal is not None and principal.name == "bob"
    assert keys.verify(key + "x") is None
    assert keys.verify("") is None
    keys.close()
    raw = keys_path_for(db).read_bytes()
    assert key.encode() not in raw
    assert key[4:20].encode() not in raw
    with sqlite3.connect(keys_path_for(db)) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM api_keys")]
    assert names == ["bob"]


@pytest.mark.parametrize("name", ["", "has space", "-leading", "x" * 65, "slash/no"])
def test_bad_key_names(tmp_path: Path, name: str) -> None:
    keys = open_key_store(str(tmp_path / "k.db"))
    with pytest.raises(KeyNameError):
        keys.create(name)
    keys.close()


def test_the_key_file_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    sqlite3.connect(db).close()  # the data file: keys are made beside one
    made = edukg("keys", "create", "dora", "--db", db)
    assert made.returncode == 0, made.stderr
    for path in tmp_path.iterdir():
        if path.name.startswith("k.keys.db"):  # the file, its log and shared memory
            assert path.stat().st_mode & 0o777 == 0o600, path
    older = tmp_path / "old.keys.db"
    sqlite3.connect(older).close()
    older.chmod(0o644)
    assert edukg("keys", "list", "--db", str(tmp_path / "old.db")).returncode == 0
    assert older.stat().st_mode & 0o777 == 0o600  # tightened when opened


def test_keys_file_sits_beside_the_data() -> None:
    assert keys_path_for("/srv/edukg.db") == Path("/srv/edukg.keys.db")
    assert keys_path_for("data/graph") == Path("data/graph.keys")


def test_revoke_stops_a_key_at_once_and_keys_survive_reloads(
    fresh_db: str, serve: Callable[[str], Api]
) -> None:
    db = fresh_db
    build_demo(db)
    api = serve(db)
    other = edukg("keys", "create", "carol", "--db", db).stdout.splitlines()[-1]
    assert api.get("/standards-frameworks", key=other).status_code == 200
    build_demo(db)  # a reload replaces the data file, never the keys
    assert api.get("/standards-frameworks", key=other).status_code == 200
    assert api.get("/standards-frameworks").status_code == 200
    assert edukg("keys", "revoke", "carol", "--db", db).returncode == 0
    error_of(api.get("/standards-frameworks", key=other), 401, "AuthenticationError")
    assert api.get("/standards-frameworks").status_code == 200


def test_remembered_keys_forget_a_revoke_at_once(tmp_path: Path) -> None:
    """SQLite remembers verified keys until the key file changes (data_version)."""
    from edukg.store.sqlite_keys import SqliteKeyStore

    db = str(tmp_path / "k.db")
    server = SqliteKeyStore.for_db(db)
    admin = SqliteKeyStore.for_db(db)  # another connection, as `edukg keys` is
    alice = admin.create("alice")
    bob = admin.create("bob")
    assert server.verify(alice) is not None and server.verify(alice) is not None
    assert admin.revoke("alice")
    assert server.verify(alice) is None  # another connection's revoke
    assert server.verify(bob) is not None
    assert server.revoke("bob")
    assert server.verify(bob) is None  # this connection's own revoke
    for _ in range(3):
        assert server.verify("ekg_guess") is None
    server.close()
    admin.close()


def test_a_deleted_or_replaced_key_store_revokes_in_running_servers(
    tmp_path: Path, serve: Callable[[str], Api]
) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    api = serve(db)
    old = edukg("keys", "create", "old", "--db", db).stdout.splitlines()[-1]
    assert api.get("/standards-frameworks", key=old).status_code == 200  # now remembered
    for path in tmp_path.glob("edukg.keys.db*"):
        path.unlink()
    gone = api.get("/standards-frameworks", key=old)
    error_of(gone, 503, "ServiceUnavailableError")  # no key store: every key refused
    assert api.http.get("/readyz").status_code == 503
    new = edukg("keys", "create", "new", "--db", db).stdout.splitlines()[-1]
    error_of(api.get("/standards-frameworks", key=old), 401, "AuthenticationError")
    assert api.get("/standards-frameworks", key=new).status_code == 200
    assert api.http.get("/readyz").status_code == 200


def test_a_known_wrong_key_costs_no_query(tmp_path: Path) -> None:
    from edukg.store.sqlite_keys import SqliteKeyStore

    store = SqliteKeyStore.for_db(str(tmp_path / "k.db"))
    store.create("someone")
    queries: list[str] = []
    assert store.verify("ekg_wrong") is None
    store._connection().set_trace_callback(queries.append)
    for _ in range(5):
        assert store.verify("ekg_wrong") is None
    assert [q for q in queries if "api_keys" in q] == []
    store.close()


def test_keys_list_shows_each_keys_rate_limit(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    sqlite3.connect(db).close()  # the data file: keys are made beside one
    for args in (("own", "--rate", "3", "--burst", "9"), ("default",), ("free", "--rate", "0")):
        assert edukg("keys", "create", *args, "--db", db).returncode == 0
    table = edukg("keys", "list", "--db", db).stdout
    assert "3/s, burst 9" in table and "server default" in table and "unlimited" in table
    listed = [orjson.loads(x) for x in edukg("keys", "list", "--json", "--db", db).stdout.split()]
    assert {(k["name"], k["rate"], k["burst"]) for k in listed} == {
        ("own", 3.0, 9), ("default", None, None), ("free", 0.0, None)}  # fmt: skip


def test_keys_are_not_made_for_a_path_that_holds_nothing(tmp_path: Path) -> None:
    done = edukg("keys", "create", "x", "--db", str(tmp_path / "nope.db"))
    assert done.returncode == 1 and "no database at" in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == []  # no key file was made
