"""Who holds which key and which role in a tenant (SPEC C52), kept as events of the tenant,
and the audit of its decisions: the commands, the bodies the API takes and what it answers.

A key is issued and revoked, a role granted and revoked, each by a command whose event says
who did it and when (decisions D28). Only a key's SHA-256 is ever kept: the key itself is
answered once, to whoever issued it. The audit lists every command the tenant's callers had
decided, applied or refused (decisions D30).
"""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import Field
from pydantic.config import JsonDict

from contracts.answers import Answer, Cursor, Position, Timestamp, shown_as
from contracts.feedback import Contract
from contracts.roles import Role
from contracts.scalars import Name

SHA256 = Field(pattern="^[0-9a-f]{64}$", description="hex SHA-256 of the key")


class IssueApiKey(Contract):
    """Keep a new key of the tenant: only its hash, the subject it acts as and its scopes."""

    sha256: str = SHA256
    subject: Name
    scopes: list[str] = Field(default_factory=list, max_length=20)
    service: bool = False


class RevokeApiKey(Contract):
    """Take a key's rights away from the next request on (decisions D29)."""

    key_id: UUID = Field(alias="keyId")


class GrantRole(Contract):
    """Give ``subject`` a role in the tenant."""

    subject: Name
    role: Role


class RevokeRole(Contract):
    """Take a role from ``subject``; its keys keep their scopes, not the role."""

    subject: Name
    role: Role


class NewApiKey(Contract):
    """``POST /factory/keys``: the key is made by the service and shown once."""

    subject: Name
    scopes: list[str] = Field(default_factory=list, max_length=20)
    service: bool = Field(default=False, description="A service's key, not a person's.")


EXAMPLE_KEY_ID = "5f0f1c1e-3c55-5d1b-9a43-7d1c2f6e8a10"
EXAMPLE_POSITION = "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf"
EXAMPLE_KEY: JsonDict = {
    "keyId": EXAMPLE_KEY_ID,
    "subject": "bruno",
    "scopes": ["factory.feedback.write", "factory.feedback.read"],
    "service": False,
    "issuedBy": "alice",
    "issuedAt": "2026-11-27T09:02:11.125000+00:00",
    "revoked": False,
    "revokedBy": None,
    "revokedAt": None,
}


class KeyIssued(Answer):
    """The new key, shown this once: only its hash is kept."""

    model_config = shown_as(
        {
            "keyId": EXAMPLE_KEY_ID,
            "key": "fl_3m2Jq0c1a0Q1lW0p2yTt9mZ8i8d7c6b5a4Z3Y2X1W0v",
            "position": EXAMPLE_POSITION,
        }
    )

    key_id: str = Field(alias="keyId", json_schema_extra={"format": "uuid"})
    key: str = Field(description="The bearer key; it is not shown again.")
    position: Position


class KeyView(Answer):
    """A key of the tenant, as it stands: who issued it, and who revoked it."""

    model_config = shown_as(EXAMPLE_KEY)

    key_id: str = Field(alias="keyId", json_schema_extra={"format": "uuid"})
    subject: str
    scopes: list[str]
    service: bool
    issued_by: str = Field(alias="issuedBy")
    issued_at: Timestamp = Field(alias="issuedAt")
    revoked: bool
    revoked_by: str | None = Field(alias="revokedBy")
    revoked_at: Timestamp | None = Field(alias="revokedAt")


class KeyList(Answer):
    """The tenant's keys issued through the store, newest first (configured keys are not
    listed: they live in the settings)."""

    model_config = shown_as({"items": [EXAMPLE_KEY], "next": None})

    items: list[KeyView]
    next: Cursor


class Changed(Answer):
    """A key revoked or a role granted or revoked: where the change stands in the log."""

    model_config = shown_as({"position": EXAMPLE_POSITION})

    position: Position


EXAMPLE_GRANT: JsonDict = {
    "subject": "bruno",
    "role": "Reviewer",
    "grantedBy": "alice",
    "grantedAt": "2026-11-27T09:03:40.500000+00:00",
}


class GrantView(Answer):
    """A role a subject holds in the tenant, and who granted it when."""

    model_config = shown_as(EXAMPLE_GRANT)

    subject: str
    role: Role
    granted_by: str = Field(alias="grantedBy")
    granted_at: Timestamp = Field(alias="grantedAt")


class GrantList(Answer):
    """The roles granted in the tenant, by subject then role."""

    model_config = shown_as({"items": [EXAMPLE_GRANT], "next": None})

    items: list[GrantView]
    next: Cursor


AuditResult = Literal["applied", "already-applied", "refused", "failed"]
EXAMPLE_AUDIT: JsonDict = {
    "actor": "alice",
    "roles": ["PlatformAdmin"],
    "service": False,
    "at": "2026-11-27T09:03:40.500000+00:00",
    "command": "GrantRole",
    "commandId": "9c343bcc-732e-596b-9374-fca7e7fa3487",
    "aggregates": ["0b469701-85fc-54bb-a941-d969daa3bc51"],
    "result": "applied",
    "reason": None,
    "door": "http",
    "items": 1,
}


class AuditRecord(Answer):
    """One decision: who asked (and in which roles), when, which command on which
    aggregates, and how it ended."""

    model_config = shown_as(EXAMPLE_AUDIT)

    actor: str
    roles: list[str]
    service: bool
    at: Timestamp
    command: str = Field(description="The command's name, never its body.")
    command_id: str = Field(alias="commandId")
    aggregates: list[Annotated[str, Field(json_schema_extra={"format": "uuid"})]]
    result: AuditResult
    reason: str | None = Field(description="A refusal's or failure's error code; else null.")
    door: str | None = Field(
        default=None,
        description="The door it came in by: `http` (the API), `console`, `grpc`, `kafka`, "
        "`cli`; null for the service's own work and rows written before doors were named. A "
        "refusal decided at the door itself has an empty `commandId` and names the operation "
        "asked (`POST /factory/evals/cases/{case_id}/runs`) as its `command`.",
    )
    items: int = Field(
        default=1,
        ge=1,
        description="How many commands the row stands for: 1, or the items of one batch "
        "request that ended alike (the batch is one decision of one caller); their "
        "`aggregates` are all named, `commandId` is the first item's.",
    )


class AuditPage(Answer):
    """The tenant's decisions, newest first."""

    model_config = shown_as({"items": [EXAMPLE_AUDIT], "next": None})

    items: list[AuditRecord]
    next: Cursor
