"""PostgreSQL reads on the request path, as little Python as a round trip allows.

psycopg's cursors cost about 100 µs of interpreter time per query, and hold the
interpreter lock for much of it, so that threads waiting on the database barely
overlap (measured: 2.3x fewer queries per second than below, docs/benchmarks.md). The
request path needs little of what they offer: it runs a few fixed statements with
text, number and list parameters and reads text, bytea and number columns. Here each
thread keeps its own libpq connection (psycopg's `pq` layer), prepares each statement
once, and reads results in binary; libpq waits for the server without the interpreter
lock. Loads, keys' writes and everything else keep using psycopg itself.

Every wait here has a deadline, and a heartbeat on a connection of its own (`_Pulse`)
tells, without a request waiting, whether PostgreSQL answers: a server that accepts
connections and never answers (a hung host, a storage stall) costs a request at most
the deadline, and once the heartbeat is late, nothing that can do without the
database waits on it (docs/security.md, "A database that does not answer").

A statement has its own limit (`statement_seconds`, the same as SQLite's): PostgreSQL
cancels it there itself (`statement_timeout`, set on each connection), which answers the
request "took too long" and keeps the connection. Should the server not answer even that
(frozen), the client gives up a little later, asks the server to cancel the statement
(a cancel request, waited for briefly), and drops the connection. Neither decides that
PostgreSQL is stalled: the heartbeat does, and once it has, a statement being awaited
is given up at once (within a quarter of a second) rather than at its limit.

Measured against psycopg 3 set up for speed (prepared statements, binary results, a
connection per thread), on the request path's statements: about three quarters of the
CPU per query and 1.1-1.2 times the queries per second (bench/pg_wire.py,
docs/benchmarks.md); what decides keeping it.
"""

from __future__ import annotations

import select
import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import psycopg
from psycopg import pq

from edukg.store.errors import REQUEST_DEADLINE, StatementTimeout

_MAX_STATEMENTS = 512  # prepared per connection; past it, all are dropped and remade
BEAT = 0.25  # seconds between heartbeats
LATE = 0.5  # seconds a heartbeat may go unanswered before waits that can be skipped are

_TEXT = (25, 1043, 19, 18, 1042)  # text, varchar, name, "char", bpchar
_DECODERS: dict[int, Callable[[bytes], Any]] = {
    **{oid: lambda v: v.decode() for oid in _TEXT},
    17: bytes,  # bytea
    16: lambda v: v == b"\x01",  # bool
    21: lambda v: int.from_bytes(v, "big", signed=True),  # int2
    23: lambda v: int.from_bytes(v, "big", signed=True),  # int4
    20: lambda v: int.from_bytes(v, "big", signed=True),  # int8
    700: lambda v: struct.unpack("!f", v)[0],  # float4
    701: lambda v: struct.unpack("!d", v)[0],  # float8
}


class Unavailable(Exception):
    """The server cannot be reached, or the connection broke."""


class QueryError(Exception):
    """The server refused a statement; `sqlstate` says why (42P01: no such table)."""

    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class NoDecoder(Exception):
    """A result column of a type read here has no binary decoder (the caller reads the
    statement another way); never one of PostgreSQL's own errors."""


CANCELED = "57014"  # query_canceled: statement_timeout (or a cancel request) ended it
_GRACE = 1.0  # seconds past the statement limit the client waits on a server that is silent
_CANCEL_WAIT = 0.5  # seconds a cancel request may take to be sent; it is not awaited further


class _Connection:
    def __init__(self, url: str, timeout: int, statement_seconds: float) -> None:
        # PostgreSQL ends a statement at the limit itself (its lock waits included): set
        # as the connection starts, so that it costs no round trip of its own.
        limit = f"-c statement_timeout={int(statement_seconds * 1000)}"
        self.pg = _connect(_conninfo(url, timeout, limit), timeout)
        self.statements: dict[str, bytes] = {}


def _cancel(pg: pq.abc.PGconn) -> None:
    """Ask the server to cancel what `pg` is running (a cancel request on a connection of
    its own, non-blocking), waiting at most _CANCEL_WAIT for it to be sent."""
    try:
        cancel = pg.cancel_conn()
        cancel.start()
        deadline = time.monotonic() + _CANCEL_WAIT
        while True:
            status = cancel.poll()
            remaining = deadline - time.monotonic()
            if status in (pq.PollingStatus.OK, pq.PollingStatus.FAILED) or remaining <= 0:
                break
            if status == pq.PollingStatus.READING:
                select.select([cancel.socket], [], [], remaining)
            else:
                select.select([], [cancel.socket], [], remaining)
        cancel.finish()
    except (psycopg.OperationalError, OSError):
        pass  # the connection is dropped anyway


_SLICE = 0.25  # seconds between looks at the heartbeat while a statement is awaited


def _left() -> float | None:
    """The seconds left of the request's one limit (None outside a request)."""
    deadline = REQUEST_DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


def _await(
    pg: pq.abc.PGconn, timeout: float, stalled: Callable[[], bool] | None = None
) -> pq.abc.PGresult | None:
    """The next result of what was sent, waiting in select (which lets other threads
    run; libpq's own wait would hold the interpreter lock) for at most `timeout` s, and
    no longer than the heartbeat says PostgreSQL answers (`stalled`)."""
    deadline = time.monotonic() + timeout
    while pg.is_busy():
        remaining = deadline - time.monotonic()
        wait = min(remaining, _SLICE) if stalled is not None else remaining
        ready = select.select([pg.socket], [], [], wait)[0] if wait > 0 else []
        if not ready:
            if remaining <= wait:
                raise Unavailable(f"PostgreSQL did not answer within {timeout:g} s")
            if stalled is not None and stalled():
                raise Unavailable("PostgreSQL is not answering (a heartbeat went unanswered)")
            continue
        pg.consume_input()
    return pg.get_result()


class _Pulse:
    """A heartbeat (`SELECT 1` every BEAT s on a connection of its own): `late` while a
    beat has gone unanswered for LATE s, `stalled` once one missed the deadline (or a
    request's statement did) until a beat is answered again: at once when PostgreSQL
    resumes, since a beat is always waiting on it."""

    def __init__(self, url: str, timeout: int) -> None:
        self._conninfo = _conninfo(url, timeout)
        self._timeout = timeout
        self._sent: float | None = None
        self.stalled = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def late(self) -> bool:
        """Whether PostgreSQL may not be answering now (a request need not wait to see)."""
        sent = self._sent
        return self.stalled or (sent is not None and time.monotonic() - sent > LATE)

    def start(self) -> None:
        """Beat from now on (once)."""
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stop.is_set():
                    self._thread = threading.Thread(
                        target=self._beat, name="edukg-pg-pulse", daemon=True
                    )
                    self._thread.start()

    def stop(self) -> None:
        """No more beats; the thread closes its connection as it ends."""
        self._stop.set()

    def _beat(self) -> None:
        pg: pq.abc.PGconn | None = None
        while not self._stop.is_set():
            sent = self._sent = time.monotonic()
            try:
                if pg is None:
                    pg = _connect(self._conninfo, self._timeout)
                _ask(pg, self._timeout)
                self.stalled = False
            except (Unavailable, psycopg.OperationalError):
                self.stalled = True
                if pg is not None:
                    pg.finish()
                    pg = None
            self._sent = None
            # A beat refused at once waits its turn; one that timed out goes again now.
            self._stop.wait(max(0.0, BEAT - (time.monotonic() - sent)))
        if pg is not None:
            pg.finish()


def _ask(pg: pq.abc.PGconn, timeout: float) -> None:
    """One `SELECT 1` answered within `timeout` s, or Unavailable."""
    pg.send_query(b"SELECT 1")
    result = _await(pg, timeout)
    while _await(pg, timeout) is not None:
        pass
    if result is None or result.status != pq.ExecStatus.TUPLES_OK:
        raise Unavailable("PostgreSQL did not answer the heartbeat")


def _connect(conninfo: bytes, timeout: float) -> pq.abc.PGconn:
    """Connect without blocking other threads: libpq's own blocking connect would hold
    the interpreter lock for the whole handshake."""
    pg = pq.PGconn.connect_start(conninfo)
    deadline = time.monotonic() + timeout
    while True:
        status = pg.connect_poll()
        if status == pq.PollingStatus.OK:
            return pg
        remaining = deadline - time.monotonic()
        if status == pq.PollingStatus.FAILED or remaining <= 0:
            message = bytes(pg.error_message or b"timeout expired").decode(errors="replace")
            pg.finish()
            raise Unavailable(message.strip())
        waiting = [pg.socket]
        if status == pq.PollingStatus.READING:
            select.select(waiting, [], [], remaining)
        else:
            select.select([], waiting, [], remaining)


def _conninfo(url: str, timeout: int, options: str = "") -> bytes:
    """The connection string: `url`, a connect timeout, and `options` added to any the
    URL gives (`-c name=value` settings for the session)."""
    given = psycopg.conninfo.conninfo_to_dict(url).get("options") or ""
    extra = {"options": f"{given} {options}".strip()} if options else {}
    return psycopg.conninfo.make_conninfo(url, connect_timeout=str(timeout), **extra).encode()


class WireReader:
    """Parameterised reads on one libpq connection per thread (placeholders: `%s`).

    Shared by everything in a process that reads the same database (`shared`): the key
    check and the data reads of a request take turns on its thread's one connection.
    """

    _registry: ClassVar[dict[str, tuple[WireReader, int]]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str, timeout: int = 2, statement_seconds: float = 5.0) -> None:
        self._url = url
        self._timeout = timeout
        self.statement_seconds = statement_seconds
        self._local = threading.local()
        self._all: list[_Connection] = []
        self._lock = threading.Lock()
        self._pulse = _Pulse(url, timeout)

    @property
    def quiet(self) -> bool:
        """Whether PostgreSQL may not be answering: what can do without it should not
        wait on it (a remembered key, the version last read, /healthz)."""
        self._pulse.start()
        return self._pulse.late

    @classmethod
    def shared(cls, url: str, timeout: int = 2, statement_seconds: float = 5.0) -> WireReader:
        """The process's reader for `url` (release it with `release`)."""
        with cls._registry_lock:
            reader, users = cls._registry.get(url, (None, 0))
            if reader is None:
                reader = cls(url, timeout, statement_seconds)
            cls._registry[url] = (reader, users + 1)
            return reader

    def release(self) -> None:
        """One user fewer; the last one closes every connection."""
        with self._registry_lock:
            reader, users = self._registry.get(self._url, (self, 1))
            if reader is not self:
                return
            if users > 1:
                self._registry[self._url] = (self, users - 1)
                return
            del self._registry[self._url]
        self.close()

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of `sql`; raises Unavailable or QueryError (StatementTimeout once the
        request's deadline has passed)."""
        left = _left()
        if left is not None and left <= 0:
            raise StatementTimeout(f"The request took longer than {self.statement_seconds:g} s")
        conn = self._connection()
        name = conn.statements.get(sql) or self._prepare(conn, sql)
        values: Any = [_encode(p) for p in params]  # libpq takes None for NULL
        return self._rows(
            conn,
            self._sent(conn, lambda: conn.pg.send_query_prepared(name, values, result_format=1)),
        )

    def _sent(self, conn: _Connection, send: Callable[[], None]) -> pq.abc.PGresult:
        """The one result of one statement sent by `send`, within the deadline."""
        try:
            send()
            result = self._next_result(conn)
            while self._next_result(conn) is not None:  # a statement's results end in None
                pass
        except psycopg.OperationalError as exc:
            self._drop(conn)
            raise Unavailable(str(exc)) from None
        if result is None:
            self._drop(conn)
            raise Unavailable("the connection to PostgreSQL broke")
        return result

    def _next_result(self, conn: _Connection) -> pq.abc.PGresult | None:
        """The next result: PostgreSQL ends a statement at its limit itself; past that and
        a grace, the statement is cancelled on the server and the connection dropped. A
        request whose deadline comes first cancels its statement then."""
        left = _left()
        if left is not None and left < self.statement_seconds:
            try:
                return _await(conn.pg, max(left, 0.0), lambda: self._pulse.stalled)
            except Unavailable:
                if self._pulse.stalled:
                    _cancel(conn.pg)
                    self._drop(conn)
                    raise
                self._cancelled(conn)
                raise StatementTimeout(
                    f"The request took longer than {self.statement_seconds:g} s"
                ) from None
        try:
            return _await(conn.pg, self.statement_seconds + _GRACE, lambda: self._pulse.stalled)
        except Unavailable as exc:
            _cancel(conn.pg)
            self._drop(conn)
            if self._pulse.stalled:  # the heartbeat says PostgreSQL is not answering
                raise
            raise StatementTimeout(
                f"PostgreSQL did not answer within {self.statement_seconds:g} s"
            ) from exc

    def _cancelled(self, conn: _Connection) -> None:
        """Cancel the statement in flight and drop the connection (what was interrupted,
        a statement's preparation included, left it in no state to trust)."""
        _cancel(conn.pg)
        self._drop(conn)

    def _rows(self, conn: _Connection, result: pq.abc.PGresult) -> list[tuple[Any, ...]]:
        status = result.status
        if status == pq.ExecStatus.TUPLES_OK:
            return _rows(result)
        if status == pq.ExecStatus.COMMAND_OK:
            return []
        self._failed(conn, result)
        raise AssertionError("unreachable")  # pragma: no cover - _failed always raises

    def _connection(self) -> _Connection:
        self._pulse.start()
        if self._pulse.stalled:  # fail now rather than each request waiting the deadline
            raise Unavailable("PostgreSQL is not answering (a heartbeat went unanswered)")
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.pg.status == pq.ConnStatus.OK:
            return conn
        if conn is not None:
            self._drop(conn)
        try:
            conn = _Connection(self._url, self._timeout, self.statement_seconds)
        except Unavailable:
            self._pulse.stalled = True  # refused or timed out: until a heartbeat is answered
            raise
        with self._lock:
            self._all.append(conn)
        self._local.conn = conn
        return conn

    def _prepare(self, conn: _Connection, sql: str) -> bytes:
        if len(conn.statements) >= _MAX_STATEMENTS:
            self._sent(conn, lambda: conn.pg.send_query(b"DEALLOCATE ALL"))
            conn.statements.clear()
        name = b"edukg_%d" % len(conn.statements)
        result = self._sent(conn, lambda: conn.pg.send_prepare(name, _numbered(sql).encode()))
        if result.status != pq.ExecStatus.COMMAND_OK:
            self._failed(conn, result)
        conn.statements[sql] = name
        return name

    def _failed(self, conn: _Connection, result: pq.abc.PGresult) -> None:
        message = (result.error_message or b"").decode(errors="replace").strip()
        if conn.pg.status != pq.ConnStatus.OK:
            self._drop(conn)
            raise Unavailable(message or "the connection to PostgreSQL broke")
        state = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
        if state == CANCELED:  # the statement limit: the connection is still good
            raise StatementTimeout(
                f"a read of the data took longer than {self.statement_seconds:g} s"
            )
        raise QueryError(message, state)

    def _drop(self, conn: _Connection) -> None:
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        conn.pg.finish()
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def close(self) -> None:
        """Close every thread's connection, and stop the heartbeat."""
        self._pulse.stop()
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.pg.finish()


def _numbered(sql: str) -> str:
    """`%s` placeholders as libpq's `$1, $2, ...`."""
    parts = sql.split("%s")
    return "".join(f"{part}${n}" for n, part in enumerate(parts[:-1], start=1)) + parts[-1]


def _encode(value: Any) -> bytes | None:
    """A parameter in PostgreSQL's text format."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, bytes):
        return b"\\x" + value.hex().encode()
    if isinstance(value, list | tuple):
        items = ",".join(
            '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in value
        )
        return ("{" + items + "}").encode()
    return str(value).encode()


def _rows(result: pq.abc.PGresult) -> list[tuple[Any, ...]]:
    decoders = []
    for column in range(result.nfields):
        decoder = _DECODERS.get(result.ftype(column))
        if decoder is None:
            raise NoDecoder(f"no binary decoder for type {result.ftype(column)}")
        decoders.append(decoder)
    get = result.get_value
    return [
        tuple(
            None if (raw := get(row, column)) is None else decode(raw)
            for column, decode in enumerate(decoders)
        )
        for row in range(result.ntuples)
    ]
