"""Keys and role grants of a tenant, as aggregates (SPEC C52; decisions D28).

An ``ApiKey`` is one key: issued once (its id derives from the tenant and the key's hash, so
the same key cannot be issued twice), revoked at most once. A ``RoleHolder`` is one subject of
one tenant and the roles it holds; each grant and each revocation is an event that names who
decided it. Granting a role held already, or revoking one not held, decides nothing: the
state asked for stands, and the log keeps only changes.
"""

from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from services.store.sealing import Personal

ACCESS_NAMESPACE = UUID("b7f2a4f0-1d6e-5c8a-9e3b-2f4d6a8c0e12")


def key_id_for(tenant_id: str, sha256: str) -> UUID:
    return uuid5(ACCESS_NAMESPACE, f"{tenant_id}/key/{sha256}")


def holder_id_for(tenant_id: str, subject: str) -> UUID:
    return uuid5(ACCESS_NAMESPACE, f"{tenant_id}/roles/{subject}")


class ApiKey(Aggregate):
    class Issued(Aggregate.Created):
        personal = Personal(
            names={"subject": "the key's holder", "by": "PlatformAdmin"}
        )  # their own keys, D130

        tenant_id: str
        sha256: str
        subject: str
        scopes: list[str]
        service: bool
        by: str

    class Revoked(Aggregate.Event):
        personal = Personal(names={"by": "PlatformAdmin"})  # their own keys, D130

        tenant_id: str
        by: str

    def __init__(
        self, tenant_id: str, sha256: str, subject: str, scopes: list[str], service: bool, by: str
    ) -> None:
        self.tenant_id, self.sha256, self.subject = tenant_id, sha256, subject
        self.scopes, self.service, self.issued_by = scopes, service, by
        self.revoked = False

    @classmethod
    def issue(
        cls,
        *,
        tenant_id: str,
        sha256: str,
        subject: str,
        scopes: list[str],
        service: bool,
        by: str,
        at: datetime,
    ) -> "ApiKey":
        return cls._create(
            cls.Issued,
            id=key_id_for(tenant_id, sha256),
            timestamp=at,
            tenant_id=tenant_id,
            sha256=sha256,
            subject=subject,
            scopes=scopes,
            service=service,
            by=by,
        )

    def revoke(self, *, by: str, at: datetime) -> None:
        if not self.revoked:  # a key revoked already stays revoked: nothing to record
            self._revoked(tenant_id=self.tenant_id, by=by, timestamp=at)

    @event(Revoked)
    def _revoked(self, tenant_id: str, by: str, timestamp: datetime) -> None:
        self.revoked = True


class RoleHolder(Aggregate):
    class Named(Aggregate.Created):
        personal = Personal(names={"subject": "the role's holder"})  # their own keys, D130

        tenant_id: str
        subject: str

    class Granted(Aggregate.Event):
        personal = Personal(
            names={"subject": "the role's holder", "by": "PlatformAdmin"}
        )  # their own keys, D130

        tenant_id: str
        subject: str
        role: str
        by: str

    class Revoked(Aggregate.Event):
        personal = Personal(
            names={"subject": "the role's holder", "by": "PlatformAdmin"}
        )  # their own keys, D130

        tenant_id: str
        subject: str
        role: str
        by: str

    def __init__(self, tenant_id: str, subject: str) -> None:
        self.tenant_id, self.subject = tenant_id, subject
        self.roles: set[str] = set()

    @classmethod
    def name(cls, *, tenant_id: str, subject: str, at: datetime) -> "RoleHolder":
        return cls._create(
            cls.Named,
            id=holder_id_for(tenant_id, subject),
            timestamp=at,
            tenant_id=tenant_id,
            subject=subject,
        )

    def grant(self, role: str, *, by: str, at: datetime) -> None:
        if role not in self.roles:
            self._granted(
                tenant_id=self.tenant_id, subject=self.subject, role=role, by=by, timestamp=at
            )

    def revoke(self, role: str, *, by: str, at: datetime) -> None:
        if role in self.roles:
            self._revoked(
                tenant_id=self.tenant_id, subject=self.subject, role=role, by=by, timestamp=at
            )

    @event(Granted)
    def _granted(
        self, tenant_id: str, subject: str, role: str, by: str, timestamp: datetime
    ) -> None:
        self.roles.add(role)

    @event(Revoked)
    def _revoked(
        self, tenant_id: str, subject: str, role: str, by: str, timestamp: datetime
    ) -> None:
        self.roles.discard(role)
