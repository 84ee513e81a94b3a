"""Building the semantic index after a load or on its own: in this process (with a
progress bar), or in a process of its own that the load does not wait for."""

from __future__ import annotations

import contextlib
import subprocess
import sys

from rich.progress import MofNCompleteColumn

from edukg.cli.output import EXIT_FAILED, EXIT_INDEX_UNFINISHED, EXIT_OK, say, terminal_bar
from edukg.store import Backend, database_errors


def index_step(db: Backend, required: bool = False, after_load: bool = False) -> int:
    """Build or finish the semantic index; without the model, say so (fail only if asked)."""
    from edukg.ingest.index import index  # noqa: PLC0415
    from edukg.model.encoder import ModelMissing  # noqa: PLC0415

    progress = None
    bar = terminal_bar(MofNCompleteColumn())
    if bar is not None:
        task = bar.add_task("embedding texts", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

    def underway() -> None:
        say(
            "Semantic index: another `edukg index` is building it (a load's own runs in the"
            f" background, its log {db.index_log()}); waiting for it to end, then finishing"
            " what it leaves, if anything. Ctrl-C stops this wait, not the other."
        )

    try:
        with bar if bar is not None else contextlib.nullcontext():  # a bar on a terminal only
            summary = index(db, progress, underway=underway)
    except ModelMissing as exc:
        say(f"Semantic index not built: {exc}. Search ranks by words only.")
        return 1 if required else 0
    except LookupError as exc:
        say(str(exc))
        return 1
    except RuntimeError as exc:  # a vectors file that is not what this index wrote
        say(f"Semantic index not finished: {exc}. Run `edukg index` again to resume.")
        return 1
    except database_errors(OSError) as exc:  # e.g. a full disk
        say(
            f"Semantic index not finished: it could not be written ({exc}). The loaded data"
            " is served; search ranks by words until `edukg index` completes."
        )
        return EXIT_INDEX_UNFINISHED if after_load else EXIT_FAILED
    if summary.already_complete:
        say(f"Semantic index complete ({summary.rows:,} texts).")
    else:
        say(
            f"Semantic index: {summary.rows:,} rows"
            + (f" (resumed at {summary.resumed_at:,})" if summary.resumed_at else "")
            + f", {summary.embedded:,} texts embedded ({summary.runtime}),"
            f" {summary.from_cache:,} from the cache, {summary.seconds:.1f} s."
        )
    return 0


def index_detached(db: Backend) -> int:
    """Start `edukg index` in a process of its own, holding none of this command's
    streams (a script reading the load's output is not kept waiting), its output in a log
    beside the database. Servers pick the index up when it is complete."""
    from edukg.model.encoder import ModelMissing, available, model_dir  # noqa: PLC0415

    try:
        if not available():
            raise ModelMissing("search by meaning needs ONNX Runtime: pip install 'edukg[index]'")
        model_dir()
    except ModelMissing as exc:  # said here, not only in a log nobody reads
        say(f"Semantic index not built: {exc}. Search ranks by words only.")
        return EXIT_OK
    store = db.store()
    try:
        underway = store.indexing()
    finally:
        store.close()
    if underway is None:
        say("Semantic index complete.")
        return EXIT_OK
    log = db.index_log()
    with open(log, "ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "edukg.cli", "index", "--db", db.db],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
    say(f"Semantic index: building in the background (process {child.pid}, log {log})."
        " Search ranks by words until it is ready, then by meaning too, without a restart;"
        " /healthz with a key shows its progress. `edukg load --wait-index` waits instead.")  # fmt: skip
    return EXIT_OK
