"""Where an alignment looks: a jurisdiction with no standards loaded is an error naming
the loaded ones (HTTP, MCP, the CLI), and every answer says which jurisdictions it
ranked."""

from __future__ import annotations

import httpx
import pytest

from harness.processes import edukg
from tests.conftest import Api, error_of
from tests.mcp_client import call_error, session
from tests.support import BASE

TEXT = "Add the fractions 1/2 and 1/4 and explain how you found a common denominator."


def _align(api: Api, body: dict[str, object]) -> httpx.Response:
    return api.http.post(BASE + "/alignments", json=body, headers={"x-api-key": api.key})


def test_a_jurisdiction_with_no_standards_is_a_404_naming_the_loaded_ones(demo: Api) -> None:
    loaded = demo.ok("/standards-frameworks")["data"]
    places = sorted({f["jurisdiction"] for f in loaded})
    error = error_of(_align(demo, {"text": TEXT, "jurisdiction": "Texas"}), 404, "NotFoundError")
    assert "'Texas'" in error["message"]
    assert all(place in error["message"] for place in places)


def test_the_answer_names_the_jurisdictions_it_ranked(demo: Api) -> None:
    loaded = demo.ok("/standards-frameworks")["data"]
    place = loaded[0]["jurisdiction"]
    one = _align(demo, {"text": TEXT, "jurisdiction": place})
    assert one.status_code == 200 and one.json()["jurisdictions"] == [place]
    every = _align(demo, {"text": TEXT})
    assert every.status_code == 200
    assert place in every.json()["jurisdictions"]


@pytest.mark.anyio
async def test_mcp_refuses_an_unloaded_jurisdiction_in_the_same_words(demo: Api) -> None:
    rest = _align(demo, {"text": TEXT, "jurisdiction": "Texas"}).json()["message"]
    async with session(demo) as mcp:
        said = await call_error(mcp, "align_text_to_standards", text=TEXT, jurisdiction="Texas")
    assert rest in said


def test_the_cli_exits_non_zero_naming_the_loaded_ones(demo_db: str) -> None:
    done = edukg("--db", demo_db, "align", TEXT, "--jurisdiction", "Texas")
    assert done.returncode != 0
    assert "Texas" in done.stderr + done.stdout and "Loaded:" in done.stderr + done.stdout
