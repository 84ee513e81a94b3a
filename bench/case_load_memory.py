"""Loading a large CASE package: time and the load's peak memory, by package size.

    python -m bench.case_load_memory [--mb 20 80 160]

Writes a CFPackage of about each size (a framework of strands and standards, each with
its isChildOf association and a typical statement), loads it into a scratch SQLite
database with `edukg load --no-index` in a subprocess, and prints the seconds taken and
the process's peak resident memory (the kernel's maxrss), and that peak per MiB of
package. The package limit (`load --max-package-mb`) is set from these figures
(docs/data.md, "CASE").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import orjson

from harness.processes import EDUKG

_PER_ITEM = 1_150  # bytes of JSON per item with its association, about
_BASE = "https://case.example.org/ims/case/v1p1"


def _link(identifier: str, kind: str) -> dict[str, str]:
    return {"identifier": identifier, "uri": f"{_BASE}/{kind}/{identifier}", "title": ""}


def package(items: int) -> bytes:
    """A CFPackage of `items` items: strands of 40 standards each."""
    doc = str(uuid.uuid4())
    out_items, out_assocs = [], []
    strand = doc
    for n in range(items):
        identifier = str(uuid.uuid4())
        is_strand = n % 41 == 0
        out_items.append({
            "identifier": identifier, "uri": f"{_BASE}/CFItems/{identifier}",
            "humanCodingScheme": f"BM.{n // 41}.{n % 41}",
            "fullStatement": f"Standard {n}: solve problems involving the four operations, and"
            " identify and explain patterns in arithmetic, using drawings and equations.",
            "CFItemType": "Strand" if is_strand else "Standard",
            "educationLevel": [f"{(n // 41) % 12 + 1:02d}"],
            "lastChangeDateTime": "2025-01-02T03:04:05+00:00",
        })  # fmt: skip
        parent = doc if is_strand else strand
        out_assocs.append({
            "identifier": str(uuid.uuid4()), "associationType": "isChildOf",
            "uri": f"{_BASE}/CFAssociations/{n}", "sequenceNumber": n % 41,
            "originNodeURI": _link(identifier, "CFItems"),
            "destinationNodeURI": _link(parent, "CFDocuments" if is_strand else "CFItems"),
            "lastChangeDateTime": "2025-01-02T03:04:05+00:00",
        })  # fmt: skip
        if is_strand:
            strand = identifier
    document = {
        "identifier": doc, "uri": f"{_BASE}/CFDocuments/{doc}", "title": "Bench Mathematics",
        "creator": "Alabama State Department of Education", "subject": ["Math"],
        "lastChangeDateTime": "2025-01-02T03:04:05+00:00", "caseVersion": "1.1",
    }  # fmt: skip
    return orjson.dumps({"CFDocument": document, "CFItems": out_items,
                         "CFAssociations": out_assocs})  # fmt: skip


def measure(path: Path, db: Path) -> tuple[float, float, int]:
    """(seconds, peak MiB, exit status) of loading `path`."""
    started = time.perf_counter()
    proc = subprocess.Popen([*EDUKG, "load", str(path), "--db", str(db), "--no-index",
                             "--data-version", "1.0.0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, nargs="+", default=[20, 80])
    parser.add_argument("--extra", nargs="*", default=[], help="more `edukg load` options")
    args = parser.parse_args()
    print("package MiB   items   load s   peak MiB   peak per package MiB")
    with tempfile.TemporaryDirectory(prefix="edukg-caseload-") as scratch:
        for mb in args.mb:
            path = Path(scratch) / f"p{mb}.json"
            body = package(mb * (1 << 20) // _PER_ITEM)
            path.write_bytes(body)
            items = body.count(b'"fullStatement"')
            del body
            seconds, peak, code = measure(path, Path(scratch) / f"p{mb}.db")
            size = path.stat().st_size / (1 << 20)
            note = "" if code == 0 else f"  (exit {code})"
            print(f"{size:11.0f} {items:7,} {seconds:8.1f} {peak:10.0f} {peak / size:22.1f}{note}")
            path.unlink()


if __name__ == "__main__":
    main()
