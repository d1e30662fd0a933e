"""Every write keeps the door's promises: the charter's Idempotency-Key (SPEC C11), a refused
snapshot stores nothing (C15, C20), and each route that reads or answers bytes declares the
media types it really takes and gives, refusing others with 415."""

from typing import Any

import httpx

from services.processes.bootstrap import Runtime
from tests.conftest import Keys, event_count
from tests.integration.test_appraisal import CHARTER
from tests.integration.test_datasets import BASE, artifact, harvest, run_event, snapshot, tenant_of

TOML = {"Content-Type": "application/toml"}
OTHER_CHARTER = """
[[line]]
id = "only-one"
text = "One line, another document."
"""


async def artifacts_stored(runtime: Runtime) -> int:
    return int(await runtime.pool.fetchval("SELECT count(*) FROM artifacts"))


async def put_charter(client: httpx.AsyncClient, document: str, **headers: str) -> httpx.Response:
    return await client.put(
        "/factory/appraisal/charter", content=document, headers={**TOML, **headers}
    )


async def test_the_charter_answers_a_repeat_under_its_key_and_refuses_another_body(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    """SPEC C11: another document under the same Idempotency-Key replaced the charter."""
    first = await put_charter(client, CHARTER, **{"Idempotency-Key": "k-1"})
    assert first.status_code == 200, first.text
    written = await event_count(runtime)
    again = await put_charter(client, CHARTER, **{"Idempotency-Key": "k-1"})
    assert again.status_code == 200, again.text
    assert (again.json()["lines"], again.json()["findings"]) == (
        first.json()["lines"],
        first.json()["findings"],
    )
    assert await event_count(runtime) == written  # nothing written again
    other = await put_charter(client, OTHER_CHARTER, **{"Idempotency-Key": "k-1"})
    assert other.status_code == 409, other.text
    assert (other.json()["error"], other.json()["field"]) == ("conflict", "Idempotency-Key")
    assert await event_count(runtime) == written
    runtime.start_projections(["appraisal"])
    shown = await client.get(
        "/factory/appraisal/charter", params={"minPosition": first.json()["position"]}
    )
    assert shown.json()["document"] == CHARTER  # the first charter is kept
    # Another key is another request: the second document is written.
    assert (await put_charter(client, OTHER_CHARTER, **{"Idempotency-Key": "k-2"})).is_success


async def test_the_charter_takes_toml_or_text_and_refuses_other_media_types_with_415(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    before = await event_count(runtime)
    for refused_as in (
        "application/json",
        "application/x-www-form-urlencoded",
        "text/html",
        "application/octet-stream",  # D140: bytes of no declared kind replaced the charter
    ):
        answer = await put_charter(client, CHARTER, **{"Content-Type": refused_as})
        assert answer.status_code == 415, (refused_as, answer.text)
        body = answer.json()
        assert (body["error"], body["field"]) == ("unsupported-media-type", "Content-Type")
        assert "application/toml" in body["accepted"]
    bare = await client.put("/factory/appraisal/charter", content=CHARTER)
    assert "content-type" not in bare.request.headers
    assert bare.status_code == 415  # nothing said of what it is
    assert await event_count(runtime) == before
    for taken_as in ("application/toml", "text/plain; charset=utf-8"):
        answer = await put_charter(client, CHARTER, **{"Content-Type": taken_as})
        assert answer.status_code == 200, (taken_as, answer.text)


async def test_an_artifact_takes_any_media_type_but_refuses_a_content_type_that_is_none(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    before = await artifacts_stored(runtime)
    for malformed in ("garbage", "text/", "/plain", "text/plain/extra"):
        answer = await client.post(
            "/factory/artifacts", content=b"x", headers={"Content-Type": malformed}
        )
        assert (answer.status_code, answer.json()["field"]) == (415, "Content-Type"), malformed
    assert await artifacts_stored(runtime) == before
    for taken in ("image/png", "application/octet-stream", "text/plain"):
        answer = await client.post(
            "/factory/artifacts", content=taken.encode(), headers={"Content-Type": taken}
        )
        assert answer.status_code == 201, (taken, answer.text)


async def test_a_snapshot_refused_with_409_stores_no_artifact(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """C15: version 1 published, then tasks change and version 1 is asked for again: the
    refusal (409 version-immutable) keeps nothing of the new document, not even an artifact."""
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant, run_event("r-1", question, outputRef=answer), "1")
    first = await snapshot(runtime, client, "agent:Office/Coach", json={"version": 1})
    assert first.status_code == 201, first.text
    await harvest(runtime, tenant, run_event("r-2", question, outputRef=answer), "2")
    stored = await artifacts_stored(runtime)
    refused = await snapshot(runtime, client, "agent:Office/Coach", json={"version": 1})
    assert refused.status_code == 409, refused.text
    skipped = await snapshot(runtime, client, "agent:Office/Coach", json={"version": 5})
    assert skipped.status_code == 409, skipped.text  # not the next version
    assert await artifacts_stored(runtime) == stored
    second = await snapshot(runtime, client, "agent:Office/Coach", json={"version": 2})
    assert second.status_code == 201, second.text
    assert await artifacts_stored(runtime) == stored + 1
    read = await client.get(f"{BASE}/agent:Office/Coach/versions/2")
    assert read.status_code == 200
    assert read.headers["content-type"] == "application/json"


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    ]


async def test_the_document_declares_the_media_types_each_route_takes_and_gives(
    client: httpx.AsyncClient,
) -> None:
    """A client generated by openapi-python-client left out the artifact upload and the
    charter, and the bodies of the artifact download and the snapshot read: all four were
    declared as ``*/*``, which it cannot generate. It generates a body it knows (JSON,
    ``application/octet-stream``, forms) and an answer of JSON, bytes or ``text/``."""
    document = (await client.get("/openapi.json")).json()
    for method, path, operation in operations(document):
        bodies = operation.get("requestBody", {}).get("content", {})
        assert "*/*" not in bodies, (method, path)
        for status, answer in operation["responses"].items():
            assert "*/*" not in answer.get("content", {}), (method, path, status)
    paths = document["paths"]
    charter = paths["/factory/appraisal/charter"]["put"]
    assert list(charter["requestBody"]["content"]) == ["application/toml", "text/plain"]
    assert "415" in charter["responses"]
    upload = paths["/factory/artifacts"]["post"]
    assert list(upload["requestBody"]["content"]) == ["application/octet-stream", "text/plain"]
    assert not any(p["in"] == "header" for p in upload.get("parameters", []))
    download = paths["/factory/artifacts/{ref}"]["get"]["responses"]["200"]["content"]
    assert list(download) == ["application/octet-stream", "text/plain"]
    version = "/factory/evaluation/datasets/{datasetId}/versions/{version}"
    read = paths[version]["get"]["responses"]["200"]["content"]
    assert list(read) == ["application/json"]
    assert read["application/json"]["schema"]["$ref"].endswith("/SnapshotDocument")
