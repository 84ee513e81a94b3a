"""The backend a `--db` value names, chosen in one place (store.backend.backend_of), and
what differs between SQLite and PostgreSQL said by the backend, not by its callers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from edukg.cli import build_demo
from edukg.store import Backend, backend_of
from edukg.store.backend import PostgresBackend, SqliteBackend


def test_the_value_chooses_the_backend_once() -> None:
    sqlite = backend_of("data/edukg.db")
    assert isinstance(sqlite, SqliteBackend) and not sqlite.networked
    for url in ("postgresql://u:secret@db:5432/edukg", "postgres://db/edukg"):
        assert isinstance(backend_of(url), PostgresBackend) and backend_of(url).networked
    assert backend_of(sqlite) is sqlite  # a backend already chosen is passed on as it is


def test_a_sqlite_file_is_found_beside_itself_and_shown_as_given(tmp_path: Path) -> None:
    db = tmp_path / "edukg.db"
    backend: Backend = backend_of(str(db))
    assert backend.missing() == f"there is no database at {db}"
    assert backend.unmade() is None  # a load makes the file
    assert "no such file" in (backend.nothing_loaded() or "")
    assert "a directory" in (backend_of(str(tmp_path)).nothing_loaded() or "")
    build_demo(backend)
    assert backend.missing() is None and backend.nothing_loaded() is None
    assert backend.workdir == tmp_path and backend.index_log() == tmp_path / "edukg.db.index.log"
    assert backend.located == str(db.absolute()) and backend.shown == str(db)
    store = backend.store()
    try:
        assert store.info() is not None
    finally:
        store.close()


def test_a_postgres_url_never_shows_its_password() -> None:
    backend = backend_of("postgresql://edukg:secret@db.internal:5432/edukg")
    assert backend.shown == "postgresql://db.internal:5432/edukg"
    assert backend.located == backend.db  # another process finds it by the same URL
    assert backend.workdir == Path(tempfile.gettempdir())
    assert backend.index_log().parent == Path(tempfile.gettempdir())
    assert backend.nothing_loaded() is None  # the database answers for itself
