"""Response cache memory: a million distinct small entries against a 64 MiB budget.

    python -m bench.response_cache [--entries 1000000] [--budget-mb 64]

Each entry is what a small data response keeps (a 100-byte body, its ETag and headers).
Prints the process's RSS growth against the budget. Target: within the budget plus a
small constant. (Requests that differ only in unknown parameters make no entry at all;
tests/app/test_caching.py holds that.)
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

from edukg.app.http import Representation
from edukg.app.response_cache import ResponseCache

ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--budget-mb", type=int, default=64)
    args = parser.parse_args()
    cache = ResponseCache(args.budget_mb * 1024 * 1024)
    before = rss_mb()
    for n in range(args.entries):
        tag = b'"%032x"' % n
        headers = [(b"content-type", b"application/json"), (b"x-data-version", b"1.11.0"),
                   (b"etag", tag), (b"cache-control", b"private, max-age=60"),
                   (b"vary", b"Accept-Encoding")]  # fmt: skip
        body = b'{"data":[],"pagination":{"limit":%d}}' % n + b" " * 60
        cache.put(tag, Representation(body, headers, tag))
    grown = rss_mb() - before
    status = cache.status()
    print(
        f"{args.entries:,} distinct entries: {status['entries']:,} kept, accounted"
        f" {status['bytes'] / 2**20:.1f} MiB of {args.budget_mb} MiB; RSS grew {grown:.1f} MiB"
        f" ({grown / args.budget_mb:.2f}x the budget; target <= 1.0x plus a small constant)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
