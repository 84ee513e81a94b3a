"""The files a live process holds (model.processes), told by their lock, not a pid."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from edukg.model.processes import claim, claim_file, held, remove_unheld, try_claim_file


def test_a_held_file_is_kept_and_an_unheld_one_removed(tmp_path: Path) -> None:
    build = claim_file(tmp_path / "edukg.db.building-1-ab")
    assert held(build.path)
    assert not remove_unheld(build.path) and build.path.exists()
    build.release()
    assert not held(build.path)
    assert remove_unheld(build.path) and not build.path.exists()
    assert not held(build.path) and not remove_unheld(build.path)  # gone: nothing to do


def test_a_held_folder_is_kept_and_an_unheld_one_removed(tmp_path: Path) -> None:
    def make() -> Path:
        folder = tmp_path / ".edukg-download-1-ab"
        folder.mkdir()
        (folder / "nodes.jsonl").write_text("{}\n")
        return folder

    folder = claim(make)
    assert not remove_unheld(folder.path) and (folder.path / "nodes.jsonl").exists()
    folder.release()
    assert remove_unheld(folder.path) and not folder.path.exists()


def test_the_lock_dies_with_its_process(tmp_path: Path) -> None:
    """A process killed outright holds nothing: what it held is removable at once."""
    path = tmp_path / "edukg.db.building-2-cd"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from edukg.model.processes import claim_file;"
         " c = claim_file(Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()",
         str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert held(path) and not remove_unheld(path)
    finally:
        holder.kill()
        holder.wait(timeout=10)
        for pipe in (holder.stdin, holder.stdout):
            if pipe is not None:
                pipe.close()
    assert not held(path)
    assert remove_unheld(path) and not path.exists()


def test_a_file_held_elsewhere_is_not_taken(tmp_path: Path) -> None:
    """An index's lock: the second writer is told at once, and takes it once it is free."""
    lock = tmp_path / "edukg.db.abc.vectors.lock"
    first = try_claim_file(lock)
    assert first is not None and held(lock)
    assert try_claim_file(lock) is None
    lock.unlink()  # as its holder does when it is done: a waiter makes the file anew
    first.release()
    second = try_claim_file(lock)
    assert second is not None and held(lock)
    second.release()
