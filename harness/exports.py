"""Export files and loaded databases, as the tests and the benchmarks make and read them."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from edukg.store import open_store


def write_export(directory: Path, lines: list[bytes], gz: bool = False) -> Path:
    """Split export lines into the two files of an export directory."""
    directory.mkdir(parents=True, exist_ok=True)
    nodes = [x for x in lines if b'"type":"node"' in x.replace(b" ", b"")]
    rels = [x for x in lines if x not in nodes]
    for name, part in (("nodes.jsonl", nodes), ("relationships.jsonl", rels)):
        data = b"\n".join(part) + b"\n"
        if gz:
            (directory / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (directory / name).write_bytes(data)
    return directory


def served_state(db: str) -> tuple[str | None, str]:
    """What a database serves: its content id and a digest of every stored record."""
    store = open_store(db, refresh=0)
    try:
        info = store.info()
        digest = hashlib.sha256()
        for relationships in (False, True):
            for line in store.export_lines(relationships):
                digest.update(line)
        return (info.content_id if info else None), digest.hexdigest()
    finally:
        store.close()
