"""Every `edukg` command line the README prints runs as printed (those that need no
network and end by themselves), in the README's order, against the demo graph's export;
and the README's table of MCP tools is the server's list.

The one substitution: the README's placeholder for where an export lives, `/data/kg/`,
is a folder of this test's own. `serve` and `quickstart` run until stopped: other tests
start them; commands naming a URL or a database server need the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

import orjson

from edukg.adapters.mcp import build_server
from edukg.ingest.demo import demo_lines
from edukg.store import open_store
from harness.case_packages import full_package
from harness.exports import write_export
from harness.processes import EDUKG
from tests.support import ROOT

_NETWORK = ("https://", "http://", "postgresql://", "redis://")
_UNTIL_STOPPED = ("edukg serve", "edukg quickstart")


def readme_commands() -> list[str]:
    """The `edukg ...` lines of the README's shell blocks, continuations joined, comments
    left off."""
    text = (ROOT / "README.md").read_text()
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for raw in block.replace("\\\n", " ").splitlines():
            line = re.split(r"\s+#\s", raw, maxsplit=1)[0].strip()
            if line.startswith("edukg "):
                found.append(line)
    return found


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command.replace("/data/kg/", f"{cwd}/data/kg/"))
    output = None
    if ">" in words:  # a redirection, as the shell would do it
        at = words.index(">")
        words, output = words[:at], words[at + 1]
    done = subprocess.run([*EDUKG, *words[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    if output is not None:
        (cwd / output).write_text(done.stdout)
    return done


def test_every_readme_command_runs_as_printed(tmp_path: Path) -> None:
    lines = list(demo_lines())
    for version in ("v1.11.0", "v1.12.0", "v1.13.0"):
        write_export(tmp_path / "data" / "kg" / version, lines)
    write_export(tmp_path, lines, gz=True)  # nodes.jsonl.gz, relationships.jsonl.gz
    (tmp_path / "district-math.json").write_bytes(orjson.dumps(full_package()))
    env = {**os.environ, "EDUKG_DB": str(tmp_path / "edukg.db")}
    ran, failed = [], []
    for command in readme_commands():
        if any(n in command for n in _NETWORK) or command.startswith(_UNTIL_STOPPED):
            continue
        done = _run(command, tmp_path, env)
        for pid in re.findall(r"in the background \(process (\d+)", done.stderr):
            with contextlib.suppress(ProcessLookupError):  # an index this test does not need
                os.kill(int(pid), signal.SIGTERM)
        ran.append(command)
        said = done.stdout + done.stderr
        if done.returncode != 0 or "Traceback" in said:
            failed.append(f"{command}\n  exit {done.returncode}: {said[-600:]}")
    assert failed == [], "\n".join(failed)
    assert len(ran) >= 14, ran  # loads, releases, CASE, crosswalks, coverage, keys
    assert (tmp_path / "pairs.csv").read_text().count("\n") > 1
    assert (tmp_path / "coverage.ndjson").read_text().count("\n") > 1


def test_the_readme_lists_every_mcp_tool_the_server_offers(demo_db: str) -> None:
    """The README's table of MCP tools is the server's list: no tool missing, none extra."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Use it from an AI assistant (MCP)", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
    store = open_store(demo_db, refresh=0)
    try:
        offered = [tool.name for tool in asyncio.run(build_server(store).list_tools())]
    finally:
        store.close()
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(offered)
