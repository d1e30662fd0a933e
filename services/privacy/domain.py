"""Erasure of a person and expiry of old text, as events (decisions D43, D45).

The keys are destroyed by the handler (``services.privacy.handlers``); the events record
that it was done, whom (by digest: the log keeps nobody's id in the clear) and when, so that
subscribers erase too and an audit sees every erasure. Decisions are pure: ids and time come
with the command.
"""

import hashlib
from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate

from services.store.sealing import Personal

ERASURE_NAMESPACE = UUID("0f1c5d8e-3a47-5b2e-9c61-7d84e2a1b3f9")


def person_digest(tenant_id: str, person: str) -> str:
    return hashlib.sha256(f"{tenant_id}/{person}".encode()).hexdigest()


def erasure_id_for(tenant_id: str, command_id: str) -> UUID:
    return uuid5(ERASURE_NAMESPACE, f"{tenant_id}/{command_id}")


def expiry_id_for(tenant_id: str, command_id: str) -> UUID:
    return uuid5(ERASURE_NAMESPACE, f"{tenant_id}/expired/{command_id}")


class Erasure(Aggregate):
    class PersonErased(Aggregate.Created):
        personal = Personal(names={"erased_by": "PlatformAdmin"})  # their own keys, D130

        tenant_id: str
        person_digest: str
        keys: list[str]  # the data keys destroyed: what was sealed under them reads as erased
        erased_by: str
        aggregates: list[str]  # where the person's data was: subscribers erase under these

    def __init__(
        self, tenant_id: str, person_digest: str, keys: list[str], erased_by: str,
        aggregates: list[str],
    ) -> None:  # fmt: skip
        self.aggregates = aggregates
        self.tenant_id = tenant_id
        self.person_digest = person_digest
        self.keys = keys
        self.erased_by = erased_by

    @classmethod
    def erase(
        cls, *, erasure_id: UUID, tenant_id: str, person: str, keys: list[UUID],
        erased_by: str, aggregates: list[UUID], at: datetime,
    ) -> "Erasure":  # fmt: skip
        return cls._create(
            cls.PersonErased, id=erasure_id, timestamp=at, tenant_id=tenant_id,
            person_digest=person_digest(tenant_id, person), keys=sorted(str(k) for k in keys),
            erased_by=erased_by, aggregates=sorted({str(a) for a in aggregates}),
        )  # fmt: skip


class Expiry(Aggregate):
    class TextExpired(Aggregate.Created):
        tenant_id: str
        before: str  # text dated in a month before this one reads as erased
        keys: list[str]

    def __init__(self, tenant_id: str, before: str, keys: list[str]) -> None:
        self.tenant_id, self.before, self.keys = tenant_id, before, keys

    @classmethod
    def expire(
        cls, *, expiry_id: UUID, tenant_id: str, before: str, keys: list[UUID], at: datetime
    ) -> "Expiry":
        return cls._create(
            cls.TextExpired, id=expiry_id, timestamp=at, tenant_id=tenant_id, before=before,
            keys=sorted(str(k) for k in keys),
        )  # fmt: skip
