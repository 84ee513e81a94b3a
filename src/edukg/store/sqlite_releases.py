"""Several releases in one SQLite location: a file per release, and the current one.

Each release is the file `<db>.release-<version>`; `<db>` itself is the current release,
a hard link to one of them. A load writes a new file, links it under its release name,
then renames it over `<db>`; `use` renames a fresh link over `<db>`. Servers follow the
inode of the path they read (see sqlite.SqliteStore), so both switches are atomic and
need no restart. The records' lines and the vectors beside a file are named by content
id, so they are kept while any release names them.

A database written before releases existed has `<db>` alone: the first command or server
that looks links it under its release name (the migration).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import orjson

from edukg.store.base import DATA_VERSION, STATEMENT_SECONDS, Release, ReleaseError
from edukg.store.changes_base import ChangeStore
from edukg.store.sqlite import SqliteStore
from edukg.store.sqlite_changes import SqliteChanges
from edukg.store.sqlite_vectors import content_of, remove_unused, vectors_path

RELEASE_MARK = ".release-"
BUILD_MARK = ".building-"


def release_path(db: Path, version: str) -> Path:
    """The file that holds release `version` of the database `db`."""
    return db.with_name(f"{db.name}{RELEASE_MARK}{version}")


def _meta(path: Path) -> dict[str, str] | None:
    """A data file's meta table, or None when it is not a readable edukg file."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1", uri=True)
        try:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def _link_over(db: Path, source: Path, target: Path) -> None:
    """Make `target` name the file `source` names, in one rename (readers of `target`
    see the old file or the new, never neither)."""
    temp = db.with_name(f"{db.name}{BUILD_MARK}{os.getpid()}-{secrets.token_hex(4)}-link")
    os.link(source, temp)
    try:
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _sync_dir(db.parent)


def _sync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(db: Path, build: Path, version: str) -> None:
    """Keep a finished build as release `version` (replacing one of that name), then make
    it the current release."""
    _link_over(db, build, release_path(db, version))
    os.replace(build, db)
    _sync_dir(db.parent)


def migrate(db: Path) -> None:
    """Give the current file a release name if it has none (a database made before
    releases existed). A directory that cannot be written is left as it is."""
    try:
        st = db.stat()
    except FileNotFoundError:
        return
    if any(_inode(path) == st.st_ino for path in _files(db).values()):
        return
    meta = _meta(db)
    version = (meta or {}).get("data_version", "")
    if not DATA_VERSION.fullmatch(version):
        return
    with contextlib.suppress(OSError):
        _link_over(db, db, release_path(db, version))


def _files(db: Path) -> dict[str, Path]:
    """Release name -> file, for every release file beside `db`."""
    found: dict[str, Path] = {}
    prefix = f"{db.name}{RELEASE_MARK}"
    for path in db.parent.glob(f"{db.name}{RELEASE_MARK}*"):
        version = path.name[len(prefix) :]
        if DATA_VERSION.fullmatch(version):
            found[version] = path
    return found


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def _forget_changes(changes: ChangeStore, kept: list[Release]) -> None:
    """The changes kept for pairs with a dropped release go with it."""
    try:
        changes.forget({r.content_id for r in kept})
    finally:
        changes.close()


def remove_unkept(db: Path, also: set[str]) -> None:
    """Delete lines and vector files that no release (nor the lines files in `also`) names."""
    names = set(also)
    for path in [db, *_files(db).values()]:
        name = (_meta(path) or {}).get("lines")
        if name:
            names.add(name)
    for old in db.parent.glob(f"{db.name}.*.lines"):
        if old.name not in names and BUILD_MARK not in old.name:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
    # Vectors go with their release (a build's name has no content id: never a match).
    remove_unused(db, {content_of(db, name) for name in names})


class SqliteReleases:
    """The releases kept beside one SQLite file, and a store for each."""

    def __init__(self, db: str, statement_seconds: float = STATEMENT_SECONDS) -> None:
        self._db = Path(db)
        self._statement_seconds = statement_seconds
        self._stores: dict[str, SqliteStore] = {}
        self._metas: dict[tuple[int, int], dict[str, str]] = {}  # (inode, mtime) -> meta
        self._lock = threading.Lock()
        self._pruner: threading.Thread | None = None
        self._closed = threading.Event()
        migrate(self._db)

    def list(self, sizes: bool = False) -> list[Release]:
        """Every kept release, oldest load first."""
        migrate(self._db)
        current = _inode(self._db)
        found: list[tuple[int, Release]] = []
        for version, path in _files(self._db).items():
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            meta = self._meta_of(path, (st.st_ino, st.st_mtime_ns))
            if meta is None:
                continue
            found.append((st.st_mtime_ns, Release(
                    data_version=version,
                    content_id=meta["content_id"],
                    loaded_at=meta["loaded_at"],
                    counts=orjson.loads(meta.get("counts", "{}")),
                    current=st.st_ino == current,
                    size_bytes=st.st_size,
                )))  # fmt: skip
        if sizes:
            found = _with_shares(self._db, found)
        else:
            found = [(t, replace(r, size_bytes=0)) for t, r in found]
        # By load time, to the second; within one second, by when the file was written.
        return [r for _, r in sorted(found, key=lambda x: (x[1].loaded_at, x[0]))]

    def _meta_of(self, path: Path, stamp: tuple[int, int]) -> dict[str, str] | None:
        meta = self._metas.get(stamp)
        if meta is None:
            meta = _meta(path)
            if meta is None or "content_id" not in meta:
                return None
            self._metas[stamp] = meta
        return meta

    def store(self, version: str) -> SqliteStore | None:
        """The store of release `version`, or None when it is not kept (a store opened
        before its release was dropped answers info() with None)."""
        store = self._stores.get(version)
        if store is not None:  # its info() looks at the file: None once it is dropped
            return store
        if not DATA_VERSION.fullmatch(version):
            return None
        path = release_path(self._db, version)
        if not os.path.exists(path):
            return None
        with self._lock:
            if self._pruner is None:
                self._pruner = threading.Thread(target=self._prune, daemon=True,
                                                name="edukg-releases")  # fmt: skip
                self._pruner.start()
            return self._stores.setdefault(
                version,
                SqliteStore(str(path), home=str(self._db),
                            statement_seconds=self._statement_seconds),
            )  # fmt: skip

    def _prune(self) -> None:
        """Let go of the stores of releases dropped by any process, within PRUNE_SECONDS:
        their files (release, vectors) are deleted, and stay on disk while held open."""
        while not self._closed.wait(PRUNE_SECONDS):
            for version, store in list(self._stores.items()):
                if not release_path(self._db, version).exists():
                    with self._lock:
                        if self._stores.get(version) is store:
                            del self._stores[version]
                    store.release()

    def stamp(self) -> str:
        """A digest of the release files and the current file (names and inodes)."""
        seen = sorted((v, _inode(p)) for v, p in _files(self._db).items())
        return hashlib.sha256(repr((seen, _inode(self._db))).encode()).hexdigest()[:16]

    def _known(self, version: str) -> Path:
        # The name is checked before it becomes a path ("../x" names no file of ours).
        path = release_path(self._db, version) if DATA_VERSION.fullmatch(version) else None
        if path is None or not path.is_file():
            known = ", ".join(r.data_version for r in self.list()) or "none"
            raise ReleaseError(f"no release {version!r} is kept here (kept: {known})")
        return path

    def use(self, version: str) -> Release:
        """Make release `version` the current one (one rename)."""
        migrate(self._db)
        _link_over(self._db, self._known(version), self._db)
        return next(r for r in self.list() if r.data_version == version)

    def drop(self, version: str) -> Release:
        """Remove release `version`, its lines and vectors (unless another release names
        them) and the changes kept for it; never the current one."""
        migrate(self._db)
        path = self._known(version)
        release = next(r for r in self.list(sizes=True) if r.data_version == version)
        if release.current:
            raise ReleaseError(
                f"release {version!r} is the current one: make another current first"
                " (edukg releases use VERSION)"
            )
        before = _bytes_beside(self._db)
        own = path.stat().st_size
        path.unlink()
        store = self._stores.pop(version, None)
        if store is not None:
            store.close()
        remove_unkept(self._db, set())
        _forget_changes(SqliteChanges(str(self._db)), self.list())
        # What was freed: its file, and the files beside that no other release reads.
        return replace(release, size_bytes=own + before - _bytes_beside(self._db))

    def close(self) -> None:
        """Let the releases' stores go."""
        self._closed.set()
        for store in self._stores.values():
            store.close()
        self._stores.clear()


def _bytes_beside(db: Path) -> int:
    """The bytes of the lines and vectors files beside `db`."""
    total = 0
    for p in db.parent.glob(f"{db.name}.*"):
        if p.suffix in (".lines", ".vectors") and p.is_file():
            total += p.stat().st_size
    return total


PRUNE_SECONDS = 2.0  # how often a server looks for releases dropped elsewhere


def _with_shares(db: Path, found: list[tuple[int, Release]]) -> list[tuple[int, Release]]:
    """Each release's file plus its share of the files beside it (lines, vectors):
    releases of the same content share those, so the sizes add up to the disk used."""
    users: dict[Path, int] = {}
    for _, r in found:
        for p in _beside(db, r.content_id):
            users[p] = users.get(p, 0) + 1
    out = []
    for t, r in found:
        shares = sum(p.stat().st_size // users[p] for p in _beside(db, r.content_id))
        out.append((t, replace(r, size_bytes=r.size_bytes + shares)))
    return out


def _beside(db: Path, content_id: str) -> list[Path]:
    """The files beside the database that a release of this content reads."""
    lines = db.with_name(f"{db.name}.{content_id[:16]}.lines")
    return [p for p in (lines, vectors_path(db, content_id)) if p.is_file()]
