"""The database a `--db` value names, and every part of it, chosen once.

`backend_of(db)` decides, in one place, whether `db` is a SQLite file or a PostgreSQL
database; every command and the server then ask the `Backend` it returns for the parts
they need (the data store, releases, changes, keys, a loader, an indexer) and for what
differs between the two (where a load builds and downloads, whether a database is there,
how the location is shown), instead of each testing the string again.
"""

from __future__ import annotations

import hashlib
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from edukg.store.base import (
    STATEMENT_SECONDS,
    Indexer,
    KeyStore,
    Loader,
    Releases,
    Store,
)
from edukg.store.changes_base import ChangeStore

# Seconds a server's look at its SQLite files (the data file's identity, the key file's
# data_version) holds: a look is a system call and a statement, too dear for every cache
# hit; a new load or a revoke is served within this (docs/security.md).
LOCAL_RECHECK = 0.002


class BackendMissing(RuntimeError):
    """A `--db` or `--redis` URL names a backend whose optional packages are not installed."""


def require_postgres() -> None:
    """Raise BackendMissing, with the command that fixes it, when psycopg is absent."""
    try:
        import psycopg  # noqa: F401, PLC0415
        import psycopg_pool  # noqa: F401, PLC0415
    except ImportError:
        raise BackendMissing(
            "PostgreSQL support is not installed: pip install 'edukg[postgres]'"
        ) from None


@dataclass(frozen=True)
class Backend(ABC):
    """A database and its parts (see the module's docstring)."""

    db: str  # the `--db` value, as given
    networked = False  # its reads wait on the network (servers run them on threads)

    @abstractmethod
    def require(self) -> None:
        """BackendMissing when the packages this backend needs are not installed."""

    @abstractmethod
    def store(self, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS) -> Store:
        """The data store. `refresh`: how often, in seconds, a PostgreSQL reader looks for
        a new version (a SQLite reader looks at its file at least every LOCAL_RECHECK);
        `statement_seconds`: how long one read may run before it is interrupted."""

    @abstractmethod
    def releases(
        self, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
    ) -> Releases:
        """The releases kept, each readable by a store of its own (opening them migrates a
        database made before releases existed)."""

    @abstractmethod
    def changes(self) -> ChangeStore:
        """The changes kept between the releases."""

    @abstractmethod
    def keys(
        self,
        create: bool = True,
        recheck: float = 0.0,
        statement_seconds: float = STATEMENT_SECONDS,
    ) -> KeyStore:
        """The API keys (always the primary's). A SQLite key file is made on first use only
        if `create`; `recheck`: seconds a look for revokes holds (0: every verify looks)."""

    @abstractmethod
    def loader(self) -> Loader:
        """A loader that builds a new version beside the served one."""

    @abstractmethod
    def indexer(self) -> Indexer | None:
        """The semantic-index writer for the version served; None when nothing is loaded."""

    @abstractmethod
    def missing(self) -> str | None:
        """Why nothing is there, in one line (no such file; a database the server says
        does not exist); None when it is there or cannot be told now."""

    @abstractmethod
    def unmade(self) -> str | None:
        """Why a load cannot write here: a PostgreSQL database that does not exist (a load
        makes a SQLite file itself); None when it can."""

    @abstractmethod
    def nothing_loaded(self) -> str | None:
        """Why a command that reads loaded data cannot start here (a SQLite file that is
        not there, or a directory); None otherwise (a database answers for itself)."""

    @abstractmethod
    def keys_missing(self, creating: bool) -> str | None:
        """Why the key commands cannot work here (no key file, and no data to put one
        beside when `creating`); None when they can."""

    def serves_data(self) -> bool:
        """Whether a release is loaded and served here now (a database that is not there,
        or cannot be opened, serves nothing)."""
        try:
            store = self.store()
        except Exception:  # a database that cannot be opened serves nothing
            return False
        try:
            return store.info() is not None
        finally:
            store.close()

    @property
    @abstractmethod
    def workdir(self) -> Path:
        """Where a load downloads and builds."""

    @property
    @abstractmethod
    def shown(self) -> str:
        """The location as messages show it (never a password)."""

    @property
    @abstractmethod
    def located(self) -> str:
        """The location as another process finds it (a SQLite file: its absolute path)."""

    @abstractmethod
    def index_log(self) -> Path:
        """Where a background `edukg index` writes its output."""

    @abstractmethod
    def remove_stale_builds(self) -> None:
        """Remove the unfinished builds of loads whose process is gone."""


@dataclass(frozen=True)
class SqliteBackend(Backend):
    """A SQLite file, with its key file, releases and changes beside it."""

    def require(self) -> None:
        return None

    def store(self, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS) -> Store:
        from edukg.store.sqlite import SqliteStore  # noqa: PLC0415

        return SqliteStore(self.db, recheck=min(refresh, LOCAL_RECHECK),
                           statement_seconds=statement_seconds)  # fmt: skip

    def releases(
        self, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
    ) -> Releases:
        from edukg.store.sqlite_releases import SqliteReleases  # noqa: PLC0415

        return SqliteReleases(self.db, statement_seconds)

    def changes(self) -> ChangeStore:
        from edukg.store.sqlite_changes import SqliteChanges  # noqa: PLC0415

        return SqliteChanges(self.db)

    def keys(
        self,
        create: bool = True,
        recheck: float = 0.0,
        statement_seconds: float = STATEMENT_SECONDS,
    ) -> KeyStore:
        from edukg.store.sqlite_keys import SqliteKeyStore  # noqa: PLC0415

        return SqliteKeyStore.for_db(self.db, create, recheck)

    def loader(self) -> Loader:
        from edukg.store.sqlite_load import SqliteLoader  # noqa: PLC0415

        return SqliteLoader(self.db)

    def indexer(self) -> Indexer | None:
        from edukg.store.sqlite_vectors import SqliteIndexer  # noqa: PLC0415

        return SqliteIndexer.open(self.db)

    def missing(self) -> str | None:
        return None if Path(self.db).is_file() else f"there is no database at {self.db}"

    def unmade(self) -> str | None:
        return None

    def nothing_loaded(self) -> str | None:
        path = Path(self.db)
        if path.is_file():
            return None
        why = (f"a directory, not a database file: name the file, e.g. --db {path / 'edukg.db'}"
               if path.is_dir() else "no such file")  # fmt: skip
        return f"nothing is loaded at {self.db} ({why}): check --db or $EDUKG_DB"

    def keys_missing(self, creating: bool) -> str | None:
        from edukg.store.keys import keys_path_for  # noqa: PLC0415

        key_file = keys_path_for(self.db)
        if key_file.is_file():
            return None
        if not creating:
            return (f"no key file for {self.db} ({key_file} does not exist): check --db or"
                    " $EDUKG_DB; nothing was created")  # fmt: skip
        if not Path(self.db).is_file():
            return (f"there is no database at {self.db} and no key file beside it: check --db"
                    " or $EDUKG_DB (load data first: edukg load EXPORT --db ...); no key was"
                    " created")  # fmt: skip
        return None

    @property
    def workdir(self) -> Path:
        return Path(self.db).absolute().parent

    @property
    def shown(self) -> str:
        return self.db

    @property
    def located(self) -> str:
        return str(Path(self.db).absolute())

    def index_log(self) -> Path:
        path = Path(self.db).absolute()
        return path.with_name(f"{path.name}.index.log")

    def remove_stale_builds(self) -> None:
        from edukg.store.sqlite_load import remove_stale_builds  # noqa: PLC0415

        remove_stale_builds(Path(self.db).absolute())


@dataclass(frozen=True)
class PostgresBackend(Backend):
    """A PostgreSQL database: every part in its own schemas and tables."""

    networked = True

    def require(self) -> None:
        require_postgres()

    def store(self, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS) -> Store:
        self.require()
        from edukg.store.postgres import PostgresStore  # noqa: PLC0415

        return PostgresStore(self.db, refresh, statement_seconds=statement_seconds)

    def releases(
        self, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
    ) -> Releases:
        self.require()
        from edukg.store.postgres_releases import PostgresReleases  # noqa: PLC0415

        return PostgresReleases(self.db, refresh, statement_seconds)

    def changes(self) -> ChangeStore:
        self.require()
        from edukg.store.postgres_changes import PostgresChanges  # noqa: PLC0415

        return PostgresChanges(self.db)

    def keys(
        self,
        create: bool = True,
        recheck: float = 0.0,
        statement_seconds: float = STATEMENT_SECONDS,
    ) -> KeyStore:
        self.require()
        from edukg.store.postgres_keys import PostgresKeyStore  # noqa: PLC0415

        return PostgresKeyStore(self.db, recheck, statement_seconds=statement_seconds)

    def loader(self) -> Loader:
        self.require()
        from edukg.store.postgres_load import PostgresLoader  # noqa: PLC0415

        return PostgresLoader(self.db)

    def indexer(self) -> Indexer | None:
        self.require()
        from edukg.store.postgres_load import PostgresIndexer  # noqa: PLC0415

        return PostgresIndexer.open(self.db)

    def missing(self) -> str | None:
        self.require()
        import psycopg  # noqa: PLC0415

        try:
            psycopg.connect(self.db, connect_timeout=3).close()
        except psycopg.OperationalError as exc:
            if "does not exist" in str(exc):
                name = self.db.rsplit("/", 1)[-1].split("?", 1)[0]
                return (
                    f"the PostgreSQL database {name!r} does not exist: create it first"
                    f" (createdb {name}, or CREATE DATABASE {name})"
                )
        return None

    def unmade(self) -> str | None:
        return self.missing()

    def nothing_loaded(self) -> str | None:
        return None

    def keys_missing(self, creating: bool) -> str | None:
        missing = self.missing()
        return None if missing is None else f"{missing}; nothing was changed"

    @property
    def workdir(self) -> Path:
        return Path(tempfile.gettempdir())

    @property
    def located(self) -> str:
        return self.db

    @property
    def shown(self) -> str:
        if "@" not in self.db:
            return self.db
        scheme, rest = self.db.split("://", 1)
        return f"{scheme}://{rest.split('@', 1)[1]}"

    def index_log(self) -> Path:
        name = hashlib.sha256(self.db.encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"edukg-index-{name}.log"

    def remove_stale_builds(self) -> None:
        # A build schema left by a dead load is dropped by the next load; its private
        # SQLite build, in the temporary folder, goes now.
        from edukg.store.postgres_load import remove_stale_builds  # noqa: PLC0415

        remove_stale_builds()


def backend_of(db: str | Backend) -> Backend:
    """The backend a `--db` value names: the one place that tells PostgreSQL from SQLite
    (a backend already chosen is returned as it is)."""
    if isinstance(db, Backend):
        return db
    if db.startswith(("postgresql://", "postgres://")):
        return PostgresBackend(db)
    return SqliteBackend(db)
