"""Finding the export's files and reading them one line at a time."""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlparse

import httpx
import orjson

from edukg.ingest.case_package import looks_like_package
from edukg.ingest.errors import LoadError
from edukg.ingest.limits import DEFAULT_LIMITS, LoadLimits
from edukg.model.processes import claim, remove_unheld

NODE_FILES = ("nodes.jsonl", "nodes.jsonl.gz")
RELATIONSHIP_FILES = ("relationships.jsonl", "relationships.jsonl.gz")
_VERSION = re.compile(r"(?:^|[/_\-.@])v(\d+\.\d+\.\d+)(?=$|[/_\-.])")

# Called with (bytes done, bytes total or None, description) as work advances.
Progress = Callable[[int, int | None, str], None]


@dataclass(frozen=True)
class Source:
    """One export file on local disk, and the name to use for it in messages."""

    name: str
    path: Path


def guess_version(sources: list[str]) -> str | None:
    """`1.11.0` from a `v1.11.0` segment of any source path or URL, else None (the load
    then names the release by its date and content: see builder.unnamed_version)."""
    for source in sources:
        match = _VERSION.search(source)
        if match:
            return match.group(1)
    return None


def _is_url(source: str) -> bool:
    return urlparse(source).scheme in ("http", "https")


def resolve(
    sources: list[str],
    workdir: Path,
    progress: Progress | None = None,
    limits: LoadLimits = DEFAULT_LIMITS,
) -> tuple[list[Source], list[Source]]:
    """Local files for the given paths, directories and URLs (downloaded into `workdir`,
    each up to its limit): (the export's files, the CASE packages), told apart by their
    content (a pipe is always export)."""
    found = _located(sources, workdir, progress, limits)
    packages = [f for f in found if f.path.is_file() and looks_like_package(f.path)]
    return [f for f in found if f not in packages], packages


def _located(
    sources: list[str], workdir: Path, progress: Progress | None, limits: LoadLimits
) -> list[Source]:
    if not sources:
        raise LoadError("no source given: name a directory, the two files, or their URLs")
    found: list[Source] = []
    for source in sources:
        if _is_url(source):
            found.append(Source(source, download(source, workdir, progress, limits)))
            continue
        path = Path(source)
        if path.is_dir():
            for names in (NODE_FILES, RELATIONSHIP_FILES):
                match = next((path / n for n in names if (path / n).is_file()), None)
                if match is None:
                    raise LoadError(f"{path}: holds no {names[0]} (or {names[1]})")
                found.append(Source(str(match), match))
        elif path.exists():  # a file, or a pipe such as <(zcat export.jsonl.gz)
            found.append(Source(str(path), path))
        else:
            raise LoadError(f"{source}: no such file or directory")
    return found


# A source slower than this on average, once the grace has passed, is given up: a
# trickle of bytes would otherwise hold a load open for ever (each read is in time).
MIN_RATE = 16 << 10  # bytes a second
RATE_GRACE = 60.0  # seconds
_SPARE = 64 << 20  # bytes left free on the disk a download writes to


def download(
    url: str, workdir: Path, progress: Progress | None = None, limits: LoadLimits = DEFAULT_LIMITS
) -> Path:
    """Stream `url` to a file in `workdir`, up to its size limit (a CASE path's is the
    package limit), as fast as a minimum rate, and never filling the disk."""
    name = Path(urlparse(url).path).name or "download"
    limit = limits.package_bytes if "/ims/case/" in url else limits.download_bytes
    handle, temp = tempfile.mkstemp(prefix="download-", suffix=f"-{name}", dir=workdir)
    try:
        with (
            open(handle, "wb") as out,
            httpx.stream("GET", url, follow_redirects=True, timeout=60) as response,
        ):
            _refuse_answer(url, response)
            total = int(response.headers.get("content-length", 0)) or None
            _room_for(url, workdir, total or 0)
            started, checked = time.monotonic(), 0
            for chunk in response.iter_raw():  # as it arrives: a trickle is seen too
                out.write(chunk)
                done = response.num_bytes_downloaded
                if done > limit:
                    raise LoadError(f"{url}: larger than {limit >> 20:,} MiB; stopped")
                if done - checked > _SPARE:
                    _room_for(url, workdir, 0)
                    checked = done
                _in_time(url, done, time.monotonic() - started)
                if progress:
                    progress(done, total, f"download {name}")
    except httpx.HTTPError as exc:
        Path(temp).unlink(missing_ok=True)
        raise LoadError(f"{url}: download failed ({exc})") from None
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise LoadError(f"{url}: the download could not be written ({exc.strerror})") from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Path(temp)


DOWNLOAD_PREFIX = ".edukg-download-"  # then the loading process's id


@contextlib.contextmanager
def downloads(workdir: Path) -> Iterator[Path]:
    """A folder of this load's own for what it downloads in `workdir` (gone after it),
    once the folders of loads that were killed are removed."""
    workdir.mkdir(parents=True, exist_ok=True)
    remove_stale_downloads(workdir)
    prefix = f"{DOWNLOAD_PREFIX}{os.getpid()}-"
    # Held for the load's life: what tells another process (of any PID namespace) that
    # the folder is not a dead load's.
    folder = claim(lambda: Path(tempfile.mkdtemp(prefix=prefix, dir=workdir)))
    try:
        yield folder.path
    finally:
        shutil.rmtree(folder.path, ignore_errors=True)
        folder.release()


def remove_stale_downloads(workdir: Path) -> None:
    """Remove the download folders of loads that are gone (no live process holds them)."""
    if not workdir.is_dir():
        return
    for folder in workdir.glob(f"{DOWNLOAD_PREFIX}*"):
        if folder.is_dir():
            remove_unheld(folder)


def _room_for(url: str, workdir: Path, size: int) -> None:
    """LoadError unless the disk has room for `size` more bytes and some to spare."""
    free = shutil.disk_usage(workdir).free
    if free < size + _SPARE:
        raise LoadError(
            f"{url}: not enough free disk space in {workdir} ({free >> 20:,} MiB free"
            f"{f', {size >> 20:,} MiB to download' if size else ''}); stopped"
        )


def _in_time(url: str, done: int, elapsed: float) -> None:
    if elapsed > RATE_GRACE and done / elapsed < MIN_RATE:
        raise LoadError(
            f"{url}: arriving at {done / elapsed / 1024:.1f} KiB/s after {elapsed:.0f} s,"
            f" under the {MIN_RATE >> 10} KiB/s a download must keep; stopped"
        )


def _refuse_answer(url: str, response: httpx.Response) -> None:
    """A clear error for an answer that cannot be data: an error status (with a CASE
    server's own description when it sent one) or an HTML page."""
    if response.status_code != 200:
        detail = ""
        if "json" in response.headers.get("content-type", ""):
            body = b"".join(_head(response, 1 << 16))
            detail = _case_error(body)
        raise LoadError(f"{url}: the server answered HTTP {response.status_code}{detail}")
    if "text/html" in response.headers.get("content-type", ""):
        raise LoadError(f"{url}: an HTML page, not an export or a CASE package")


def _head(response: httpx.Response, limit: int) -> Iterator[bytes]:
    read = 0
    for chunk in response.iter_bytes():
        yield chunk[: limit - read]
        read += len(chunk)
        if read >= limit:
            return


def _case_error(body: bytes) -> str:
    """' (CASE: description)' from a CASE error body (imsx_StatusInfo), else ''."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    status = parsed.get("imsx_StatusInfo", parsed) if isinstance(parsed, dict) else None
    if not isinstance(status, dict) or "imsx_codeMajor" not in status:
        return ""
    text = status.get("imsx_description") or status.get("imsx_codeMinor") or ""
    return f" (CASE {status.get('imsx_codeMajor')}: {str(text)[:200]})"


def _open(path: Path) -> tuple[BufferedReader, BinaryIO | gzip.GzipFile]:
    """(the raw file, the stream of lines): gzip is told by its magic bytes, not its name.

    Peeking rather than seeking lets a pipe be a source too.
    """
    raw = open(path, "rb")  # noqa: SIM115 - closed by read_lines
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return raw, gzip.GzipFile(fileobj=raw, mode="rb")
    return raw, raw


def _position(raw: BufferedReader, counted: int) -> int:
    try:
        return raw.tell()
    except OSError:  # a pipe: bytes of lines read stand in for the position
        return counted


Lines = Iterable[tuple[int, bytes]]  # (line number, line)


def sourced_lines(
    sources: list[Source],
    progress: Progress | None = None,
    through: Callable[[Lines], Lines] | None = None,
    then: Iterable[tuple[str, Lines]] = (),
) -> Iterator[tuple[str, Lines]]:
    """The lines a load reads, by source: each file's (`through`: what replaces some of
    them, as CASE packages do), then `then`'s (the packages' own records)."""
    for source in sources:
        lines = read_lines(source, progress)
        yield source.name, through(lines) if through is not None else lines
    yield from then


def read_lines(source: Source, progress: Progress | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for each non-blank line; memory stays flat whatever the size."""
    raw, stream = _open(source.path)
    total = source.path.stat().st_size or None  # a pipe has no size
    label = Path(source.name).name
    counted = 0
    try:
        for number, line in enumerate(stream, start=1):
            counted += len(line)
            if progress and number % 8192 == 0:
                progress(_position(raw, counted), total, label)
            stripped = line.rstrip(b"\r\n")
            if stripped.strip():
                yield number, stripped
        if progress:
            progress(total or counted, total, label)
    except (OSError, EOFError) as exc:
        raise LoadError(f"{source.name}: cannot be read to the end ({exc})") from None
    finally:
        stream.close()
        raw.close()
