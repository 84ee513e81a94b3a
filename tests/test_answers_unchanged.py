"""Refactors change no answer: every operation's bytes match the digests recorded in
tests/data/answers.json. After a deliberate change of an answer, record them again with
EDUKG_RECORD_ANSWERS=1 and say why in the commit."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import orjson
import pytest

from tests.conftest import Api
from tests.every_operation import REQUESTS, unsigned

RECORDED = Path(__file__).parent / "data" / "answers.json"
# What a client sees of an answer besides its body.
HEADERS = ("content-type", "cache-control", "vary")


def _digest(api: Api, path: str, params: dict[str, str]) -> str:
    response = api.get(path, **params)
    seen = hashlib.sha256(str(response.status_code).encode())
    for name in HEADERS:
        seen.update(f"\n{name}: {response.headers.get(name, '')}".encode())
    # An error names its request, different on every call.
    body = re.sub(rb"req_[0-9a-f]+", b"req_", unsigned(response.content))
    seen.update(b"\n\n" + body)
    return seen.hexdigest()


def _name(path: str, params: dict[str, str]) -> str:
    return path + ("?" + "&".join(f"{k}={v}" for k, v in sorted(params.items())) if params else "")


def test_every_operation_answers_as_recorded(demo: Api) -> None:
    first = demo.ok("/learning-components", academicSubject="Mathematics", limit="1")
    component = first["data"][0]["identifier"]
    answers = {
        _name(path, params): _digest(demo, path.replace("{component}", component), params)
        for path, params in REQUESTS
    }
    if os.environ.get("EDUKG_RECORD_ANSWERS") == "1":
        RECORDED.write_bytes(orjson.dumps(answers, option=orjson.OPT_INDENT_2) + b"\n")
        pytest.skip("answers recorded: commit tests/data/answers.json")
    recorded = orjson.loads(RECORDED.read_bytes())
    changed = sorted(name for name in answers if recorded.get(name) != answers[name])
    assert not changed, f"these answers changed: {changed}"
    assert set(recorded) == set(answers)
