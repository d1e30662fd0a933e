"""An agent's webhook (decisions D190-D196), against real PostgreSQL and a real local
receiver: who sets it, what a bad URL gets, each notice delivered once and signed, a failing
receiver retried and shown in Operations while another agent's notices flow."""

import asyncio
import json
from email.message import Message
from typing import Any

from services.processes.bootstrap import Runtime
from services.webhooks.signed import DELIVERY_HEADER, SIGNATURE_HEADER, signature
from tests.conftest import client_for, event_count, settings_for
from tests.integration.test_role_rules import (
    RoleKeys,
    auth,
    filed,
    keys,  # noqa: F401  (the fixture)
    registered,
)
from tests.webhook_endpoint import webhook_endpoint

M, A, V, R = "AssetMaintainer", "PlatformAdmin", "Reviewer", "Requester"


async def test_a_maintainer_sets_reads_and_withdraws_the_agent_s_webhook(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    agent = "Office/Agent/Hooked"
    async with client_for(runtime, keys.by_role[A]) as http:
        assert (await registered(http, keys.by_role[A], agent, ["assetmaintainer-1"])).is_success
        path = f"/factory/agents/{agent}/webhook"
        made = await http.put(path, json={"url": "https://hooks.example/in"},
                              headers=auth(keys.by_role[M]))  # fmt: skip
        assert made.status_code == 200, made.text
        secret = made.json()["secret"]
        assert len(secret) == 64  # D191: made by the service, shown once
        shown = await http.get(path, headers=auth(keys.by_role[M]))
        assert shown.status_code == 200, shown.text
        assert shown.json()["secret"] is None
        assert shown.json()["url"] == "https://hooks.example/in"
        again = await http.put(path, json={"url": "https://hooks.example/in"},
                               headers=auth(keys.by_role[A]))  # fmt: skip
        assert again.status_code == 200
        assert again.json()["secret"] != secret
        gone = await http.delete(path, headers=auth(keys.by_role[M]))
        assert gone.status_code == 200, gone.text
        assert (await http.get(path, headers=auth(keys.by_role[M]))).status_code == 404


async def test_another_maintainer_a_reviewer_and_another_tenant_are_refused_recording_nothing(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    agent = "Office/Agent/Theirs"
    async with client_for(runtime, keys.by_role[A]) as http:
        assert (await registered(http, keys.by_role[A], agent, ["assetmaintainer-1"])).is_success
        path = f"/factory/agents/{agent}/webhook"
        before = await event_count(runtime)
        for key in (keys.second[M], keys.by_role[V], keys.by_role[R]):
            for method in ("put", "get", "delete"):
                answer = await http.request(method, path, json={"url": "https://h.example/x"},
                                            headers=auth(key))  # fmt: skip
                assert answer.status_code == 403, (method, answer.text)
                assert answer.json()["field"] == "role"
        elsewhere = await http.put(path, json={"url": "https://h.example/x"},
                                   headers=auth(keys.admin_b))  # fmt: skip
        assert elsewhere.status_code == 404, elsewhere.text  # absent in tenant B
        assert await event_count(runtime) == before


async def test_a_bad_url_is_422_naming_the_field_and_records_nothing(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    agent = "Office/Agent/Urls"
    async with client_for(runtime, keys.by_role[A]) as http:
        assert (await registered(http, keys.by_role[A], agent, ["assetmaintainer-1"])).is_success
        path = f"/factory/agents/{agent}/webhook"
        before = await event_count(runtime)
        for body in (
            {"url": "http://hooks.example/in"},  # D192: https off the machine
            {"url": "ftp://hooks.example/in"},
            {"url": "https://user:pw@hooks.example/in"},
            {"url": "https://hooks.example/in#frag"},
            {"url": "not a url"},
            {"url": ""},
            {"url": 7},
        ):
            answer = await http.put(path, json=body, headers=auth(keys.by_role[M]))
            assert answer.status_code == 422, (body, answer.text)
            assert answer.json()["field"] == "url", answer.json()
        extra = await http.put(path, json={"url": "https://h.example/", "secret": "mine"},
                               headers=auth(keys.by_role[M]))  # fmt: skip
        assert extra.status_code == 422, extra.text
        assert extra.json()["field"] == "secret", extra.text
        assert await event_count(runtime) == before


def receiver(answers: list[int], received: list[tuple[bytes, Message]]) -> Any:
    def answer(body: bytes, headers: Message) -> int:
        received.append((body, headers))
        return answers.pop(0) if answers else 200

    return answer


async def until(check: Any, seconds: float = 30) -> None:
    async with asyncio.timeout(seconds):
        while not await check():
            await asyncio.sleep(0.05)


async def test_each_notice_arrives_once_signed_and_a_failing_receiver_is_retried_and_shown(
    database_url: str,
    keys: RoleKeys,  # noqa: F811
) -> None:
    update = {"agent_webhook_backoff_seconds": 0.2, "agent_webhook_max_attempts": 3}
    runtime = await Runtime.open(settings_for(database_url, keys).model_copy(update=update))
    good: list[tuple[bytes, Message]] = []
    bad: list[tuple[bytes, Message]] = []
    try:
        runtime.start_agent_webhooks()
        with (
            webhook_endpoint(receiver([], good)) as good_url,
            webhook_endpoint(receiver([503] * 10, bad)) as bad_url,
        ):
            async with client_for(runtime, keys.by_role[A]) as http:
                coach, writer = "Office/Agent/Coach", "Office/Agent/Writer"
                for agent in (coach, writer):
                    made = await registered(http, keys.by_role[A], agent, ["assetmaintainer-1"])
                    assert made.is_success
                await filed(http, keys.by_role[R], coach)  # before the webhook: not sent
                secrets = {}
                for agent, url in ((coach, good_url), (writer, bad_url)):
                    set_ = await http.put(f"/factory/agents/{agent}/webhook",
                                          json={"url": f"{url}/in"},
                                          headers=auth(keys.by_role[M]))  # fmt: skip
                    assert set_.status_code == 200, set_.text
                    secrets[agent] = set_.json()["secret"]
                report = await filed(http, keys.by_role[R], coach)
                await filed(http, keys.by_role[R], writer)

                async def given_up() -> bool:
                    found = await http.get("/factory/operations/agent-webhooks",
                                           headers=auth(keys.by_role["Operator"]))  # fmt: skip
                    return any(i["givenUp"] == 1 for i in found.json()["items"])

                await until(given_up)
                await asyncio.sleep(0.5)  # time for a second delivery, were there one
                # Once, signed, the CloudEvent naming the report (D193, D194).
                assert len(good) == 1
                body, headers = good[0]
                assert headers[SIGNATURE_HEADER] == signature(secrets[coach], body)
                event = json.loads(body)
                assert event["type"] == "factory.owners.v1.report-addressed"
                assert event["data"] == {"agent": coach, "reportId": report, "kind": "not-found"}
                assert headers[DELIVERY_HEADER] == event["id"]
                # Retried with backoff, then given up, and shown (D195, D196).
                assert len(bad) == 3
                assert all(h[SIGNATURE_HEADER] == signature(secrets[writer], b) for b, h in bad)
                shown = await http.get("/factory/operations/agent-webhooks",
                                       headers=auth(keys.by_role["Operator"]))  # fmt: skip
                items = {i["agent"]: i for i in shown.json()["items"]}
                assert items[writer]["failing"]
                assert items[writer]["lastError"] == "HTTP 503"
                assert not items[coach]["failing"]
                mine = await http.get(f"/factory/agents/{writer}/webhook",
                                      headers=auth(keys.by_role[M]))  # fmt: skip
                assert mine.json()["failing"] is True
                refused = await http.get("/factory/operations/agent-webhooks",
                                         headers=auth(keys.by_role[R]))  # fmt: skip
                assert refused.status_code == 403
    finally:
        await runtime.close()


async def test_a_restarted_outbox_writes_no_notice_twice(
    database_url: str,
    keys: RoleKeys,  # noqa: F811
) -> None:
    received: list[tuple[bytes, Message]] = []
    with webhook_endpoint(receiver([], received)) as url:
        for round_ in range(2):
            runtime = await Runtime.open(settings_for(database_url, keys))
            try:
                runtime.start_agent_webhooks()
                async with client_for(runtime, keys.by_role[A]) as http:
                    if round_ == 0:
                        agent = "Office/Agent/Restarted"
                        assert (await registered(http, keys.by_role[A], agent,
                                                 ["assetmaintainer-1"])).is_success  # fmt: skip
                        set_ = await http.put(f"/factory/agents/{agent}/webhook",
                                              json={"url": f"{url}/in"},
                                              headers=auth(keys.by_role[M]))  # fmt: skip
                        assert set_.status_code == 200
                        await filed(http, keys.by_role[R], agent)

                    async def one() -> bool:
                        return len(received) >= 1

                    await until(one)
                    await asyncio.sleep(1.0)
            finally:
                await runtime.close()
    assert len(received) == 1
