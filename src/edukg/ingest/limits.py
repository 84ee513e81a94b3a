"""How much a load may read: one typed value the command line passes down (its flags,
or their variables), rather than settings read from the environment inside ingest."""

from __future__ import annotations

from dataclasses import dataclass

# Downloads stop here: a CASE path at the package limit, an export at a few GiB
# (`load --max-download`, or EDUKG_MAX_DOWNLOAD_MB, moves it).
MAX_DOWNLOAD = 16 << 30
# A package is parsed whole: a load needs about 8 times its size in memory (measured in
# bench/case_load_memory.py), so the limit is what a small machine affords. The largest
# state frameworks are a few tens of MiB; `load --max-package-mb` moves it.
MAX_PACKAGE_MB = 128


@dataclass(frozen=True)
class LoadLimits:
    """The largest download and the largest CASE package a load reads, in bytes."""

    download_bytes: int = MAX_DOWNLOAD
    package_bytes: int = MAX_PACKAGE_MB << 20

    @staticmethod
    def of(download_mb: int | None, package_mb: int | None) -> LoadLimits:
        """The limits a command was given, in MiB (None: the default; at least 1 MiB)."""
        return LoadLimits(
            MAX_DOWNLOAD if download_mb is None else max(1, download_mb) << 20,
            (MAX_PACKAGE_MB if package_mb is None else max(1, package_mb)) << 20,
        )


DEFAULT_LIMITS = LoadLimits()  # what a load reads when nothing says otherwise
