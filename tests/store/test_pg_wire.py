"""store/pg_wire.py: parameters encoded, results decoded, a statement limit that cancels
the statement on the server and keeps the connection, and a code of its own for a
result it cannot decode. Against a real PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from edukg.store.errors import StatementTimeout
from edukg.store.pg_wire import NoDecoder, QueryError, WireReader, _encode, _numbered


def test_parameters_in_postgresql_text_format() -> None:
    assert _encode(None) is None
    assert _encode(True) == b"t" and _encode(False) == b"f"
    assert _encode(b"\x00\xff") == b"\\x00ff"
    assert _encode(["a", 'b"c', "d\\e"]) == b'{"a","b\\"c","d\\\\e"}'
    assert _encode(("x",)) == b'{"x"}'
    assert _encode(7) == b"7" and _encode(2.5) == b"2.5" and _encode("é") == "é".encode()
    assert _numbered("SELECT %s, %s WHERE x = %s") == "SELECT $1, $2 WHERE x = $3"


@pytest.fixture
def reader(postgres: Callable[[str], str]) -> Iterator[tuple[WireReader, str]]:
    url = postgres("wire")
    found = WireReader(url, timeout=2, statement_seconds=1.0)
    yield found, url
    found.close()


def test_each_type_the_store_reads_comes_back_as_written(
    reader: tuple[WireReader, str],
) -> None:
    wire, _ = reader
    row = wire.query(
        "SELECT %s::text, %s::bytea, %s::bool, %s::int2, %s::int4, %s::int8, %s::float4,"
        " %s::float8, %s::varchar, NULL::text",
        ["héllo", b"\x01\x02", True, -7, 2**31 - 1, -(2**40), 0.5, 1e300, "v"],
    )
    assert row == [("héllo", b"\x01\x02", True, -7, 2**31 - 1, -(2**40), 0.5, 1e300, "v", None)]
    assert wire.query("SELECT x FROM unnest(%s::text[]) x ORDER BY x", [["b", "a"]]) == [
        ("a",), ("b",)]  # fmt: skip


def test_a_type_without_a_decoder_is_said_apart_from_server_errors(
    reader: tuple[WireReader, str],
) -> None:
    wire, _ = reader
    with pytest.raises(NoDecoder):
        wire.query("SELECT now()", [])
    with pytest.raises(QueryError) as refused:  # PostgreSQL's own error keeps its code
        wire.query("SELECT * FROM no_such_table", [])
    assert refused.value.sqlstate == "42P01"
    with pytest.raises(QueryError) as internal:
        wire.query("SELECT 1/0", [])
    assert internal.value.sqlstate == "22012"


def test_a_statement_past_its_limit_is_cancelled_on_the_server(
    reader: tuple[WireReader, str],
) -> None:
    wire, url = reader
    admin = psycopg.connect(url, autocommit=True)
    admin.execute("CREATE TABLE held (x int)")
    locker = psycopg.connect(url)
    locker.execute("LOCK TABLE held IN ACCESS EXCLUSIVE MODE")  # as a migration would
    try:
        assert wire.query("SELECT 1", []) == [(1,)]  # the connection, made before
        started = time.monotonic()
        with pytest.raises(StatementTimeout) as late:
            wire.query("SELECT count(*) FROM held", [])
        took = time.monotonic() - started
        assert 0.9 < took < 2.0, took  # the limit, not the connection's deadline
        assert "took longer than 1 s" in str(late.value)
        # Nothing is left waiting on the server, and the connection is still good.
        waiting = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT count(*) FROM held%'"
            " AND state = 'active'"
        ).fetchone()
        assert waiting == (0,)
        assert wire.query("SELECT 2", []) == [(2,)]
        assert not wire.quiet  # a slow statement is not a stalled database
    finally:
        locker.rollback()
        locker.close()
        admin.close()


def test_threads_each_keep_their_connection(reader: tuple[WireReader, str]) -> None:
    wire, _ = reader
    pids: list[int] = []

    def work() -> None:
        for _ in range(3):
            (pid,) = wire.query("SELECT pg_backend_pid()", [])[0]
            pids.append(pid)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(pids)) == 4
