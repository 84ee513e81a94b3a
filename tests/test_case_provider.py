"""The CASE provider: every operation of CASE 1.1 (/ims/case/v1p1) and 1.0 (/v1p0) on both
backends, validated against the published descriptions; errors; keys; round trips."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import orjson
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.ingest.builder import load
from edukg.store import open_key_store
from harness.case_packages import ACT, ACT_DOC, DOC, STANDARD_A, full_package, write
from tests.conftest import Api
from tests.support import SAMPLE, SHARED, ServerThread, assert_gzipped_on_request

REFERENCE = SHARED / "reference" / "case"
CA_MATH = "c6487102-d7cb-11e8-824f-0242ac160002"
PUBLIC = "https://standards.example.org"
COLLECTIONS = ("CFConcepts", "CFAssociationGroupings", "CFRubrics")


def _schema(version: str, name: str) -> dict[str, Any]:
    """A response schema of the published description, with the document's definitions."""
    if version == "v1p1":
        doc = orjson.loads((REFERENCE / "case-v1p1-openapi.json").read_bytes())
        return {"$ref": f"#/components/schemas/{name}DType", "components": doc["components"]}
    doc = orjson.loads((REFERENCE / "case-v1p0-swagger.json").read_bytes())
    return {"$ref": f"#/definitions/{name}.Type", "definitions": _merged(doc["definitions"])}


def _merged(definitions: dict[str, Any]) -> dict[str, Any]:
    """The 1.0 description extends a type by `allOf` of the package type (closed with
    additionalProperties: false) and the extra property, which no object can satisfy
    as JSON Schema reads it; its evident meaning is the union, closed: that is checked."""
    out = dict(definitions)
    for name, schema in definitions.items():
        if "allOf" not in schema:
            continue
        properties: dict[str, Any] = {}
        required: list[str] = []
        for given in schema["allOf"]:
            part = definitions[given["$ref"].rsplit("/", 1)[1]] if "$ref" in given else given
            properties |= part.get("properties", {})
            required += part.get("required", [])
        out[name] = {"type": "object", "properties": properties, "required": required,
                     "additionalProperties": False}  # fmt: skip
    return out


def _package_schema(version: str) -> dict[str, Any]:
    schema: dict[str, Any] = orjson.loads(
        (REFERENCE / f"case-{version}-cfpackage-schema.json").read_bytes()
    )
    return schema


def conforms(version: str, name: str, body: Any) -> None:
    jsonschema.validate(body, _schema(version, name))
    if name == "CFPackage":
        jsonschema.validate(body, _package_schema(version))


@pytest.fixture
def provider(tmp_path: Path, fresh_db: str) -> Iterator[Callable[..., tuple[httpx.Client, str]]]:
    """A server (sample + the real fixture + the test package) and a keyed client."""
    load([str(SAMPLE), str(ACT), str(write(tmp_path / "al.json", full_package()))], fresh_db)
    keys = open_key_store(fresh_db)
    key = keys.create("case", rate=0)
    keys.close()
    servers: list[ServerThread] = []
    clients: list[httpx.Client] = []

    def start(**settings: Any) -> tuple[httpx.Client, str]:
        app = EdukgApp(Settings(db=fresh_db, public_url=PUBLIC, **settings))
        server = ServerThread(app).start()
        servers.append(server)
        clients.append(httpx.Client(base_url=server.url, headers={"x-api-key": key}, timeout=30))
        return clients[-1], key

    yield start
    for client in clients:
        client.close()
    for server in servers:
        server.stop()


def _get(client: httpx.Client, path: str, status: int = 200, **params: Any) -> Any:
    response = client.get(path, params=params)
    assert response.status_code == status, response.text
    return response.json()


@pytest.mark.parametrize("version", ["v1p1", "v1p0"])
def test_every_operation_validates(
    provider: Callable[..., tuple[httpx.Client, str]], version: str
) -> None:
    client, _ = provider()
    base = f"/ims/case/{version}"
    listed = _get(client, f"{base}/CFDocuments")
    conforms(version, "CFDocumentSet", listed)
    assert {d["identifier"] for d in listed["CFDocuments"]} >= {CA_MATH, ACT_DOC, DOC}
    for document in listed["CFDocuments"]:
        conforms(
            version, "CFDocument", _get(client, f"{base}/CFDocuments/{document['identifier']}")
        )
    for framework in (CA_MATH, ACT_DOC, DOC):
        package = _get(client, f"{base}/CFPackages/{framework}")
        conforms(version, "CFPackage", package)
    package = _get(client, f"{base}/CFPackages/{DOC}")
    item = package["CFItems"][0]["identifier"]
    conforms(version, "CFItem", _get(client, f"{base}/CFItems/{item}"))
    conforms(version, "CFAssociationSet", _get(client, f"{base}/CFItemAssociations/{STANDARD_A}"))
    association = package["CFAssociations"][0]["identifier"]
    conforms(version, "CFAssociation", _get(client, f"{base}/CFAssociations/{association}"))
    definitions = package["CFDefinitions"]
    for kind, name in (("CFItemTypes", "CFItemTypeSet"), ("CFSubjects", "CFSubjectSet"),
                       ("CFLicenses", "CFLicense")):  # fmt: skip
        identifier = definitions[kind][0]["identifier"]
        conforms(version, name, _get(client, f"{base}/{kind}/{identifier}"))
    for kind in COLLECTIONS:
        body = _get(client, f"{base}/{kind}/{uuid.uuid4()}", 404)
        conforms(version, "imsx_StatusInfo", body)


def _minor(body: dict[str, Any]) -> str:
    return str(body["imsx_codeMinor"]["imsx_codeMinorField"][0]["imsx_codeMinorFieldValue"])


def test_errors_are_status_info(provider: Callable[..., tuple[httpx.Client, str]]) -> None:
    client, _ = provider()
    v1 = "/ims/case/v1p1"
    cases = [
        (f"{v1}/CFItems/not-a-uuid", {}, 400, "invalid_uuid"),
        ("/ims/case/v1p0/CFItems/not-a-uuid", {}, 400, "invaliduuid"),
        (f"{v1}/CFItems/{uuid.uuid4()}", {}, 404, "unknownobject"),
        (f"{v1}/CFPackages/{uuid.uuid4()}", {}, 404, "unknownobject"),
        (f"{v1}/CFDocuments", {"sort": "colour"}, 400, "invalid_sort_field"),
        (f"{v1}/CFDocuments", {"fields": "title,colour"}, 400, "invalid_selection_field"),
        (f"{v1}/CFDocuments", {"filter": "colour='x'"}, 400, "invalid_selection_field"),
        (f"{v1}/CFDocuments", {"limit": "0"}, 400, "invalid_selection_field"),
        (f"{v1}/CFDocuments", {"orderBy": ""}, 400, "invalid_sort_field"),
        (f"{v1}/CFDocuments", {"offset": "1000"}, 404, "unknownobject"),
        (f"{v1}/Nothing/x", {}, 404, "unknownobject"),
    ]
    for path, params, status, minor in cases:
        body = _get(client, path, status, **params)
        version = "v1p0" if "/v1p0/" in path else "v1p1"
        conforms(version, "imsx_StatusInfo", body)
        assert (body["imsx_codeMajor"], body["imsx_severity"]) == ("failure", "error")
        assert _minor(body) == minor, (path, body)
    anonymous = httpx.get(str(client.base_url) + f"{v1}/CFDocuments")
    assert anonymous.status_code == 401 and _minor(anonymous.json()) == "unauthorised_request"
    bearer = httpx.get(
        str(client.base_url) + f"{v1}/CFDocuments",
        headers={"authorization": f"Bearer {client.headers['x-api-key']}"},
    )
    assert bearer.status_code == 200


def test_list_parameters(provider: Callable[..., tuple[httpx.Client, str]]) -> None:
    client, _ = provider()
    path = "/ims/case/v1p1/CFDocuments"
    every = _get(client, path)["CFDocuments"]
    titles = sorted(d["title"] for d in every)
    assert [d["title"] for d in _get(client, path, sort="title")["CFDocuments"]] == titles
    down = _get(client, path, sort="title", orderBy="desc")["CFDocuments"]
    assert [d["title"] for d in down] == titles[::-1]
    assert [d["title"] for d in _get(client, path, sort="title", limit=2, offset=1)[
        "CFDocuments"]] == titles[1:3]  # fmt: skip
    assert _get(client, path, fields="identifier,title")["CFDocuments"][0].keys() == {
        "identifier", "title"}  # fmt: skip
    found = _get(client, path, filter="title~'california' AND creator~'department'")
    assert [d["identifier"] for d in found["CFDocuments"]] == [CA_MATH]
    either = _get(client, path, filter=f"identifier='{CA_MATH}' OR identifier='{DOC}'")
    assert {d["identifier"] for d in either["CFDocuments"]} == {CA_MATH, DOC}
    # A quoted value may hold the joining words; it is one value, never split.
    for value in (" OR ", " AND ", "a AND b OR c", "it''s OR not"):
        quoted = client.get(path, params={"filter": f"title~'{value}'"})
        assert quoted.status_code == 404, (value, quoted.text)  # matched nothing: no 400
        assert "unknownobject" in quoted.text
    joined = _get(client, path, filter="title~' AND ' OR title~'california'")
    assert [d["identifier"] for d in joined["CFDocuments"]] == [CA_MATH]


def test_keys_etags_public_and_uris(provider: Callable[..., tuple[httpx.Client, str]]) -> None:
    client, _ = provider()
    path = f"/ims/case/v1p1/CFPackages/{DOC}"
    first = client.get(path, headers={"host": "evil.example"})
    assert first.status_code == 200 and b"evil.example" not in first.content
    served = first.json()
    assert served["CFDefinitions"]["CFItemTypes"][0]["uri"].startswith(f"{PUBLIC}/ims/case/v1p1/")
    # An imported object keeps its own uri.
    assert (
        served["CFDocument"]["uri"] == f"https://case.example.org/ims/case/v1p1/CFDocuments/{DOC}"
    )
    again = client.get(path, headers={"if-none-match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    # `*` matches a 200 only: an error stays an error.
    star = {"if-none-match": "*"}
    listed = {"if-none-match": '"x", *'}  # a list that holds `*` is a `*`, not a tag
    assert client.get(path, headers=star).status_code == 304
    assert client.get(path, headers=listed).status_code == 304
    for refused, status in (
        ("/ims/case/v1p1/CFItems/00000000-0000-4000-8000-000000000000", 404),
        ("/ims/case/v1p1/CFItems/not-a-uuid", 400),
        ("/ims/case/v1p1/CFDocuments?limit=-5", 400),
        ("/ims/case/v1p1/CFDocuments?filter=colour%3D'x'", 400),
    ):
        for condition in (star, listed):
            answered = client.get(refused, headers=condition)
            assert answered.status_code == status, (refused, condition, answered.status_code)
            assert "etag" not in answered.headers
    open_client, _ = provider(case_public=True)
    anonymous = httpx.get(str(open_client.base_url) + path)
    assert anonymous.status_code == 200
    assert httpx.get(str(open_client.base_url) + "/knowledge-graph/v0/academic-standards/"
                     f"{STANDARD_A}").status_code == 401  # fmt: skip


def test_packages_come_gzipped_under_a_tag_of_their_own(
    provider: Callable[..., tuple[httpx.Client, str]],
) -> None:
    client, _ = provider()
    path = f"/ims/case/v1p1/CFPackages/{DOC}"
    plain, zipped = assert_gzipped_on_request(client.get, path, "Accept-Encoding, X-Data-Version")
    # Two representations, two tags: each revalidates as itself.
    assert plain.headers["etag"] != zipped.headers["etag"]
    for response, encoding in ((plain, "identity"), (zipped, "gzip")):
        again = client.get(
            path, headers={"accept-encoding": encoding, "if-none-match": response.headers["etag"]}
        )
        assert again.status_code == 304 and "content-encoding" not in again.headers


def _pairs(package: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (a["associationType"], a["originNodeURI"]["identifier"],
         a["destinationNodeURI"]["identifier"])
        for a in package["CFAssociations"]
    }  # fmt: skip


def test_an_imported_package_comes_back_out(
    provider: Callable[..., tuple[httpx.Client, str]],
) -> None:
    client, _ = provider()
    given = full_package()
    served = _get(client, f"/ims/case/v1p1/CFPackages/{DOC}")
    for key in ("identifier", "title", "creator", "uri", "language", "adoptionStatus"):
        assert served["CFDocument"][key] == given["CFDocument"][key], key
    sound = {i["identifier"]: i for i in given["CFItems"][:4]}
    back = {i["identifier"]: i for i in served["CFItems"]}
    assert back.keys() == sound.keys()
    for identifier, item in sound.items():
        for key in ("fullStatement", "CFItemType", "uri", "educationLevel"):
            want = item.get(key)
            if key == "educationLevel" and want is not None:
                want = [str(want)] if not isinstance(want, list) else want
            assert back[identifier].get(key) == want, (identifier, key)
        assert back[identifier]["humanCodingScheme"] == str(item["humanCodingScheme"])
    sent = _pairs({"CFAssociations": given["CFAssociations"][:15]})
    assert _pairs(served) == sent
    crosswalk = next(a for a in served["CFAssociations"] if "extensions" in a)
    assert crosswalk["extensions"]["edukgCrosswalk"]["jaccard"] == 0.5


def test_a_knowledge_graph_framework_round_trips(
    tmp_path: Path, provider: Callable[..., tuple[httpx.Client, str]], serve: Callable[[str], Api]
) -> None:
    client, _ = provider()
    package = _get(client, f"/ims/case/v1p1/CFPackages/{CA_MATH}")
    conforms("v1p1", "CFPackage", package)
    assert len({a["identifier"] for a in package["CFAssociations"]}) == len(
        package["CFAssociations"]
    )
    target = str(tmp_path / "copy.db")
    summary = load([str(write(tmp_path / "ca.json", package))], target, "1.0.0")
    assert summary.case[0].items == len(package["CFItems"])
    copy = serve(target)
    items = copy.walk("/academic-standards", standardsFrameworkCaseIdentifierUUID=CA_MATH)
    assert {i["caseIdentifierUUID"] for i in items} == {i["identifier"] for i in package["CFItems"]}
    by_uuid = {i["identifier"]: i for i in package["CFItems"]}
    for record in items:
        source = by_uuid[record["caseIdentifierUUID"]]
        assert record["statementCode"] == source.get("humanCodingScheme")
        assert record["description"] == source["fullStatement"]
    parents = {
        (a["originNodeURI"]["identifier"], a["destinationNodeURI"]["identifier"])
        for a in package["CFAssociations"]
        if a["associationType"] == "isChildOf"
    }
    for child, parent in sorted(parents)[:200]:
        below = copy.walk(f"/academic-standards/{parent}/children")
        assert child in {b["caseIdentifierUUID"] for b in below}


def test_a_spent_rate_limit_is_server_busy(fresh_db: str, serve: Callable[[str], Api]) -> None:
    load([str(ACT)], fresh_db)
    api = serve(fresh_db)
    keys = open_key_store(fresh_db)
    limited = keys.create("case-limited", rate=0.01, burst=1)
    keys.close()
    path = f"/ims/case/v1p1/CFDocuments/{ACT_DOC}"
    first = api.http.get(path, headers={"x-api-key": limited})
    assert first.status_code == 200 and first.headers["ratelimit-remaining"] == "0"
    spent = api.http.get(path, headers={"x-api-key": limited})
    assert spent.status_code == 429 and "retry-after" in spent.headers
    conforms("v1p1", "imsx_StatusInfo", spent.json())
    assert _minor(spent.json()) == "server_busy"
