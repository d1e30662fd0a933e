"""Console sessions ended on the server side, as aggregates (decisions D122).

A session begins in its sealed cookie only: nothing is recorded when a person signs in. It is
recorded when it ends: a ``ConsoleSession`` is one session of one person, created ended (a
sign-out repeated decides nothing). ``PersonsSessions`` is one person of one tenant, each
``AllEnded`` ending every session of theirs begun at or before the event's time.
"""

from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from services.access.domain import ACCESS_NAMESPACE
from services.store.sealing import Personal

# Whose session it was and who ended it, each sealed under their own key (decisions D130,
# D138): the ended sessions' read model is keyed by these aggregates' ids, not the person's.
ENDED = Personal(names={"subject": "the session's holder", "by": "PlatformAdmin"})
NAMED = Personal(names={"subject": "the session's holder"})


def session_id_for(tenant_id: str, subject: str, session_id: str) -> UUID:
    return uuid5(ACCESS_NAMESPACE, f"{tenant_id}/session/{subject}/{session_id}")


def persons_sessions_id_for(tenant_id: str, subject: str) -> UUID:
    return uuid5(ACCESS_NAMESPACE, f"{tenant_id}/sessions/{subject}")


class ConsoleSession(Aggregate):
    class Ended(Aggregate.Created):
        personal = ENDED

        tenant_id: str
        subject: str
        session_id: str
        by: str

    def __init__(self, tenant_id: str, subject: str, session_id: str, by: str) -> None:
        self.tenant_id, self.subject = tenant_id, subject
        self.session_id, self.ended_by = session_id, by

    @classmethod
    def end(
        cls, *, tenant_id: str, subject: str, session_id: str, by: str, at: datetime
    ) -> "ConsoleSession":
        return cls._create(
            cls.Ended,
            id=session_id_for(tenant_id, subject, session_id),
            timestamp=at,
            tenant_id=tenant_id,
            subject=subject,
            session_id=session_id,
            by=by,
        )


class PersonsSessions(Aggregate):
    class Named(Aggregate.Created):
        personal = NAMED

        tenant_id: str
        subject: str

    class AllEnded(Aggregate.Event):
        personal = ENDED

        tenant_id: str
        subject: str
        by: str

    def __init__(self, tenant_id: str, subject: str) -> None:
        self.tenant_id, self.subject = tenant_id, subject

    @classmethod
    def name(cls, *, tenant_id: str, subject: str, at: datetime) -> "PersonsSessions":
        return cls._create(
            cls.Named,
            id=persons_sessions_id_for(tenant_id, subject),
            timestamp=at,
            tenant_id=tenant_id,
            subject=subject,
        )

    def end_all(self, *, by: str, at: datetime) -> None:
        """Every session begun up to ``at`` ends, however many times it is asked."""
        self._all_ended(tenant_id=self.tenant_id, subject=self.subject, by=by, timestamp=at)

    @event(AllEnded)
    def _all_ended(self, tenant_id: str, subject: str, by: str, timestamp: datetime) -> None:
        pass
