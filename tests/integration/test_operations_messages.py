"""Parked inbound messages on ``/factory/operations`` with a real Kafka broker (decisions
D96): a message belongs to the tenant its CloudEvents ``tenantid`` names; that tenant's
Operator sees it and sends it again with the CLI's ``send_again``, and the consumers apply
it; another tenant's Operator sees a count and is answered 404."""

from typing import Any

from contracts import topics
from services.kafka.inbound.parking import tenant_of
from services.processes.bootstrap import Runtime
from services.store.artifacts import put_artifact
from tests.conftest import Keys, client_for
from tests.kafka_peer import feedback_recorded, inbound, produce, record_feedback_event, settled

COMMENT = {"projectId": "p", "subjectKind": "memory", "subjectRef": "m-1", "kind": "comment"}


def tenant(runtime: Runtime, key: str) -> str:
    principal = runtime.keys.identify(key)
    assert principal is not None
    return principal.tenant_id


async def parked_of(runtime: Runtime) -> int:
    return int(await runtime.pool.fetchval("SELECT count(*) FROM parked WHERE reader = 'inbound'"))


async def test_the_named_tenants_operator_retries_its_parked_message_and_it_is_applied(
    kafka_runtime: Runtime, kafka_bootstrap: str, keys: Keys
) -> None:
    await kafka_runtime.ensure_topics()
    command_topic = kafka_runtime.settings.topic_prefix + topics.RECORD_FEEDBACK
    tenant_a = tenant(kafka_runtime, keys.a)
    ref = await put_artifact(kafka_runtime.pool, tenant_a, b"a comment", "text/plain")
    # Its reference check keeps failing for a reason of its own (the table is away): parked.
    await kafka_runtime.pool.execute("ALTER TABLE artifacts RENAME TO artifacts_away")
    message = record_feedback_event(tenant_a, "svc-a", {**COMMENT, "commentRef": ref})
    await produce(kafka_bootstrap, command_topic, [message], key=b"k")
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 1)
    assert (consumer.applied, consumer.parked) == (0, 1)

    # Tenant B's Operator: a count, no content, and A's message is not found to retry.
    async with client_for(kafka_runtime, keys.b) as bob:
        theirs = (await bob.get("/factory/operations/parked-messages")).json()
        assert (theirs["items"], theirs["own"], theirs["others"]) == ([], 0, 1)
    async with client_for(kafka_runtime, keys.a) as alice:
        ours = (await alice.get("/factory/operations/parked-messages")).json()
    [item] = ours["items"]
    assert (ours["own"], ours["others"]) == (1, 0)
    assert (item["topic"], item["offset"], item["keptWhole"]) == (command_topic, 0, True)
    assert item["size"] == len(message)
    assert "artifacts" in item["reason"]
    path = f"/factory/operations/parked-messages/{item['parkedPosition']}/retry"
    async with client_for(kafka_runtime, keys.b) as bob:
        refused = await bob.post(path)
    assert refused.status_code == 404, refused.text
    assert refused.json()["error"] == "not-found"
    assert await parked_of(kafka_runtime) == 1

    # The cause fixed, A's Operator retries: sent again to its topic and applied once.
    await kafka_runtime.pool.execute("ALTER TABLE artifacts_away RENAME TO artifacts")
    async with client_for(kafka_runtime, keys.a) as alice:
        retried = await alice.post(path)
        assert retried.status_code == 200, retried.text
        assert retried.json() == {"sent": item["parkedPosition"]}
        again = await alice.post(path)
    assert again.status_code == 404  # sent and unparked: nothing of A's is parked there now
    assert await parked_of(kafka_runtime) == 0
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 1)
    assert (consumer.applied, consumer.parked) == (1, 0)
    assert await feedback_recorded(kafka_runtime) == 1


async def test_a_message_not_kept_whole_is_a_409_and_without_kafka_a_503(
    runtime: Runtime, kafka_runtime: Runtime, keys: Keys
) -> None:
    """Parked rows as ``park`` writes them (the broker is not needed to refuse)."""
    tenant_a = tenant(runtime, keys.a)
    headers = f'[["ce_tenantid", "{tenant_a}"]]'
    # One database under both runtimes: the same parked row, with a broker and without.
    await runtime.pool.execute(
        'INSERT INTO parked (reader, position, topic, partition, "offset", code, error, '
        "payload_size, sha256, head, headers) VALUES ('inbound', 7, 't', 0, 3, 'failed', "
        "'too big', 5000, 'x', $1, $2::jsonb)",
        b"x" * 1024,
        headers,
    )
    async with client_for(kafka_runtime, keys.a) as alice:
        cut = await alice.post("/factory/operations/parked-messages/7/retry")
    assert cut.status_code == 409, cut.text
    assert "only the first 1024 of its 5000 bytes" in cut.json()["message"]
    async with client_for(runtime, keys.a) as alice:
        away = await alice.post("/factory/operations/parked-messages/7/retry")
    assert away.status_code == 503, away.text
    assert away.json()["error"] == "kafka-unavailable"


def test_the_tenant_is_the_cloudevents_tenantid_of_binary_or_whole_structured_mode() -> None:
    structured: Any = b'{"specversion": "1.0", "tenantid": "t-1", "data": {}}'
    assert tenant_of(structured, len(structured), []) == "t-1"
    assert tenant_of(b"x", 9, [["ce_tenantid", "t-2"]]) == "t-2"  # binary: header wins
    assert tenant_of(structured[:20], len(structured), []) is None  # cut short: unreadable
    assert tenant_of(b"not json", 8, [["content-type", "x"]]) is None
    assert tenant_of(b'{"tenantid": 3}', 15, []) is None
    assert tenant_of(b"[]", 2, [["ce_tenantid", ""]]) is None
