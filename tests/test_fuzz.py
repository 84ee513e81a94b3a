"""Property-based API testing with schemathesis against edukg's own OpenAPI document.

Every operation, positive and negative cases: no 5xx, responses that match the
document's schemas, only the status codes the document declares. The number of
examples per operation and mode is bounded for CI (EDUKG_FUZZ_EXAMPLES, default
10); `make fuzz` runs many more.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode, checks

from edukg.adapters.config import DEFAULT_BASE_PATH, Settings
from edukg.adapters.openapi import build_openapi
from edukg.adapters.rest import OPERATIONS
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.store import open_key_store
from tests.support import SHARED, ServerThread

EXAMPLES = int(os.environ.get("EDUKG_FUZZ_EXAMPLES", "10"))
# Not "schema-valid data is accepted": a random string is a schema-valid cursor, course or
# framework identifier, and edukg rightly answers 400 to a cursor it did not issue or to an
# unknown curriculum (as its specification says).
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.negative_data_rejection,
]
# The document is generated from the code, as the server generates it.
SCHEMA = schemathesis.openapi.from_dict(build_openapi(DEFAULT_BASE_PATH, OPERATIONS))
# edukg ignores unknown query parameters (as the hosted API does, so clients that send
# extra ones keep working): negative cases are about the declared parameters only.
SCHEMA.config.generation.update(allow_extra_parameters=False)
# Every operation must load; an invalid one fails here, at collection.
_LABELS = [result.ok().label for result in SCHEMA.get_all_operations()]  # type: ignore[union-attr]
CASES = [
    (label, mode)
    for label in _LABELS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    # The probes take no parameters: there is no invalid request to make of them.
    if not (mode == GenerationMode.NEGATIVE and label.endswith(("/healthz", "/readyz")))
]


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerThread, str]]:
    db = str(tmp_path_factory.mktemp("fuzz") / "edukg.db")
    build_demo(db)
    keys = open_key_store(db)
    key = keys.create("fuzz", rate=0)
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=db))).start()
    yield server, key
    server.stop()


def _fuzz(schema: Any, label: str, mode: GenerationMode, base_url: str, key: str) -> None:
    """Run one operation's generated cases against the server and check each answer."""
    method, path = label.split(" ", 1)
    operation = schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: schemathesis.Case[Any]) -> None:
        case.call_and_validate(base_url=base_url, headers={"x-api-key": key}, checks=CHECKS)

    run()


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_every_operation(
    label: str, mode: GenerationMode, fuzz_target: tuple[ServerThread, str]
) -> None:
    server, key = fuzz_target
    _fuzz(SCHEMA, label, mode, server.url, key)


# The CASE 1.1 description as published, with the server's URL: the CASE provider.
CASE_DESCRIPTION = SHARED / "reference" / "case" / "case-v1p1-openapi.json"


def _case_schema() -> Any:
    if not CASE_DESCRIPTION.is_file():
        return None
    schema = schemathesis.openapi.from_path(str(CASE_DESCRIPTION))
    schema.config.generation.update(allow_extra_parameters=False)
    return schema


CASE_SCHEMA = _case_schema()
CASE_LABELS = (
    [result.ok().label for result in CASE_SCHEMA.get_all_operations()]
    if CASE_SCHEMA is not None
    else []
)


# A sourcedId is any string in the description: no invalid one to make, so only the list
# (integers, an enum) has negative cases.
CASE_CASES = [
    (label, mode)
    for label in CASE_LABELS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if mode == GenerationMode.POSITIVE or label.endswith("/CFDocuments")
]


@pytest.mark.parametrize(("label", "mode"), CASE_CASES)
def test_every_case_operation(
    label: str, mode: GenerationMode, fuzz_target: tuple[ServerThread, str]
) -> None:
    server, key = fuzz_target
    _fuzz(CASE_SCHEMA, label, mode, server.url + "/ims/case/v1p1", key)
