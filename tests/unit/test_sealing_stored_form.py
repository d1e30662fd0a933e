"""What a sealed event is stored as, byte for byte (decisions D42, D222, D301), in memory: the
same keys, places and values give the bytes the store has always written, and those bytes
open to the values. Every box already in a log was written so; a change to how a box is made
that changes these bytes would be a change of the stored form, which must keep reading them.

Each person's key is derived here from their name (``FixedKeys``), so the bytes are the same
in every run. Covered: an identity and a naming field (a feedback), a dated person's text, a
list and a key of a dict field (a report's draft), and names each under their own key (a
review queue)."""

import hashlib
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from services.feedback.domain import Feedback
from services.queues.domain import ReviewQueue
from services.reports.domain import Report
from services.store.data_keys import DataKey
from services.store.event_store import EventStore
from services.store.master_keys import MasterKeys
from services.store.memory_data_keys import MemoryDataKeys
from services.store.sealing import ERASED, SealingMapper

pytestmark = pytest.mark.unit
AT = datetime(2026, 11, 27, 9, tzinfo=UTC)


class FixedKeys(MemoryDataKeys):
    """Each owner's key derived from the owner: the same key id and bytes in every run."""

    def key_for(self, tenant_id: str, person: str, scope: str) -> DataKey:
        owner = (tenant_id, person, scope)
        if owner not in self._keys:
            digest = hashlib.sha256("/".join(owner).encode()).digest()
            key = self._keys[owner] = DataKey(UUID(bytes=digest[:16], version=4), digest)
            self._by_key_id[key.key_id] = key
        return self._keys[owner]


def fixed_store() -> EventStore:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    store.data_keys = FixedKeys(MasterKeys())
    store.mapper = SealingMapper(store.mapper.transcoder, store.data_keys)
    return store


def recorded() -> Feedback.Recorded:
    return Feedback.Recorded(
        originator_id=UUID("0f0f0000-0000-4000-8000-00000000000f"), originator_version=1,
        timestamp=AT, originator_topic="services.feedback.domain:Feedback", tenant_id="t1",
        project_id="p", subject_kind="thread", subject_ref="pat/_Thread/1", kind="rating",
        rating=4, comment_ref=None, corrected_artifact_ref=None, given_by="pat",
        command_id="c1", request_digest="d",
    )  # fmt: skip


def drafted() -> Report.Drafted:
    return Report.Drafted(
        originator_id=UUID("0d0d0000-0000-4000-8000-00000000000d"), originator_version=1,
        timestamp=AT, originator_topic="services.reports.domain:Report", tenant_id="t1",
        reporter="pat", category="answer", message="ünïcode words", thread=None,
        message_ref=None, extra_context=None, command_id="c1", prompt=None,
        context=["a", "b"], facts={"expected": "the right answer", "kind": "answer"},
    )  # fmt: skip


def defined() -> ReviewQueue.Defined:
    return ReviewQueue.Defined(
        originator_id=UUID("0e0e0000-0000-4000-8000-00000000000e"), originator_version=1,
        timestamp=AT, originator_topic="services.queues.domain:ReviewQueue", tenant_id="t1",
        queue="triage", filter={"agent": "A/B"}, reviewers=["kim", "lee"], claim_minutes=30,
        defined_by="pat",
    )  # fmt: skip


STORED = {
    "feedback": (
        recorded,
        b'{"timestamp":{"_type_":"datetime_iso","_data_":"2026-11-27T09:00:00+00:00"},"origina'
        b'tor_topic":"services.feedback.domain:Feedback","tenant_id":"t1","project_id":"p","su'
        b'bject_kind":"thread","subject_ref":{"sealed":"9cb96782-6003-483e-bf9f-bce6c54aec71",'
        b'"box":"xEz0CHUhvodiQE4DjhJ0+1ZHa5k34LFw1or/Vot5UD6+YS31rViOGCrp"},"kind":"rating","r'
        b'ating":4,"comment_ref":null,"corrected_artifact_ref":null,"given_by":{"sealed":"9cb9'
        b'6782-6003-483e-bf9f-bce6c54aec71","box":"trXpt+u7nSNAiKugkYNKGohKn/nvlo4YqNT8M727wdA'
        b'="},"command_id":"c1","request_digest":"d","serves":null,"given_as":null,"trace_id":'
        b'null,"span_id":null,"gen_ai":null}',
    ),
    "draft": (
        drafted,
        b'{"timestamp":{"_type_":"datetime_iso","_data_":"2026-11-27T09:00:00+00:00"},"origina'
        b'tor_topic":"services.reports.domain:Report","tenant_id":"t1","reporter":{"sealed":"0'
        b'6311f0e-ac46-4b73-be14-65cedd5f6c80","box":"X8FWylVBnCFEZcGHHr0nCffGiy6b7c5hmgqYwF3V'
        b'eJM="},"category":"answer","message":{"sealed":"06311f0e-ac46-4b73-be14-65cedd5f6c80'
        b'","box":"NEFTJAKHCfojB+EmchA0z/wGmtZHn/Hqla9wkCoUOqT1yodhmzJ5zhY3wQ4="},"thread":nul'
        b'l,"message_ref":null,"extra_context":null,"command_id":"c1","prompt":null,"context":'
        b'{"sealed":"06311f0e-ac46-4b73-be14-65cedd5f6c80","box":"NLFElSNy7Q/GrEMn4IcynGawdAxe'
        b'3oBFsCCLLl7AaaxW+FUAuZXl7qXOhw==","n":2},"facts":{"expected":{"sealed":"06311f0e-ac4'
        b'6-4b73-be14-65cedd5f6c80","box":"Vgw9qYoh3ZU9QCaxKxuyAr1fFNJYGGtjTozeW2n5XmgNqFetSA+'
        b'iLvL80hQS"},"kind":"answer"},"serves":null,"trace_id":null,"span_id":null,"gen_ai":n'
        b'ull,"class_version":2}',
    ),
    "queue": (
        defined,
        b'{"timestamp":{"_type_":"datetime_iso","_data_":"2026-11-27T09:00:00+00:00"},"origina'
        b'tor_topic":"services.queues.domain:ReviewQueue","tenant_id":"t1","queue":"triage","f'
        b'ilter":{"agent":"A/B"},"reviewers":[{"sealed":"d4f3b2ef-85ea-4211-b4fc-56cc7e80fafd"'
        b',"box":"i+dRkgzhmBDQsjX1FNLetR3CdykNo9ueympWDEFJxko="},{"sealed":"7b47d114-567d-4195'
        b'-b6c6-54c4c2e839c2","box":"lcs5oxAWIpUKaOB5nwoUc7B4AdJ7xPiDrulDZTcyOXc="}],"claim_mi'
        b'nutes":30,"defined_by":{"sealed":"9cb96782-6003-483e-bf9f-bce6c54aec71","box":"wamxn'
        b'Dph91nFVBXSqDCdtYKJreyIp1h3S1s0v2wpLQg="}}',
    ),
}
# A draft sealed before its texts were kept as UTF-8 (decisions D222): in the JSON form.
BEFORE_D222 = (
    b'{"timestamp":{"_type_":"datetime_iso","_data_":"2026-11-27T09:00:00+00:00"},"origina'
    b'tor_topic":"services.reports.domain:Report","tenant_id":"t1","reporter":{"sealed":"0'
    b'6311f0e-ac46-4b73-be14-65cedd5f6c80","box":"X8FWylVBnCFEZcGHZe8wXwJ4GCLq9mX5UPcNxs7H'
    b'clrSzSvxWs+f"},"category":"answer","message":{"sealed":"06311f0e-ac46-4b73-be14-65ce'
    b'dd5f6c80","box":"NEFTJAKHCfojB+EmCfH+gwWLOgVNOX7+lblxww4WRHGu415zhdxv87vCQWksxnuOhlO'
    b'F"},"thread":null,"message_ref":null,"extra_context":null,"command_id":"c1","prompt"'
    b':null,"context":{"sealed":"06311f0e-ac46-4b73-be14-65cedd5f6c80","box":"NLFElSNy7Q/G'
    b'rEMn4IcynGawdAxe3oBFsCCLLl7AaaxW+FUAuZXl7qXOhw==","n":2},"facts":{"expected":{"seale'
    b'd":"06311f0e-ac46-4b73-be14-65cedd5f6c80","box":"Vgw9qYoh3ZU9QCaxUE2sRacPCd1VTDlrR5f'
    b'dHnp2bii3+WgTSNGV99jbMhQnn2QVBLsiSA=="},"kind":"answer"},"serves":null,"trace_id":nu'
    b'll,"span_id":null,"gen_ai":null,"class_version":2}'
)


@pytest.mark.parametrize("name", STORED)
def test_an_event_is_sealed_into_the_bytes_it_always_was(name: str) -> None:
    event, stored = STORED[name]
    store = fixed_store()
    assert store.mapper.to_stored_event(event()).state == stored


@pytest.mark.parametrize("name", STORED)
def test_the_bytes_written_before_open_to_the_values(name: str) -> None:
    event, stored = STORED[name]
    store = fixed_store()
    written = store.mapper.to_stored_event(event())
    back = store.mapper.to_domain_event(replace(written, state=stored))
    assert vars(back) == vars(event())


def test_the_bytes_written_before_read_as_erased_once_the_key_is_destroyed() -> None:
    store = fixed_store()
    written = store.mapper.to_stored_event(drafted())
    assert store.data_keys.destroy_person("t1", "pat")
    back: Any = store.mapper.to_domain_event(replace(written, state=STORED["draft"][1]))
    assert (back.message, back.context, back.facts["expected"]) == (ERASED, [ERASED] * 2, ERASED)
    assert back.reporter.startswith("erased:")


def test_a_draft_sealed_in_the_json_form_before_opens_to_its_values() -> None:
    store = fixed_store()
    written = store.mapper.to_stored_event(drafted())
    assert written.state != BEFORE_D222
    assert vars(store.mapper.to_domain_event(replace(written, state=BEFORE_D222))) == vars(
        drafted()
    )


def test_a_batch_stores_each_event_as_it_is_stored_alone_with_its_keys_held_or_not() -> None:
    """Sealed first with the keys the process holds; a batch that names someone whose key it
    does not hold yet makes the batch's keys first and is sealed again (decisions D220, D301)."""
    held = fixed_store()
    for event in (recorded, drafted, defined):
        held.mapper.to_stored_event(event())  # every key of the batch held from here on
    batch = held.mapper.to_stored_events([recorded(), drafted(), defined()])  # type: ignore[attr-defined]
    assert [stored.state for stored in batch] == [stored for _, stored in STORED.values()]
    fresh = fixed_store().mapper.to_stored_events([recorded(), drafted(), defined()])  # type: ignore[attr-defined]
    assert [stored.state for stored in fresh] == [stored for _, stored in STORED.values()]
