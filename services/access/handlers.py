"""Command handlers of keys and role grants: load, decide, hand back for the bus to append.

Only a PlatformAdmin of the tenant decides them (SPEC C52; decisions D28), whichever door the
command came through: each command's ``permits`` (services/access/context.py) is checked by
the rule engine where the command is decided, so a refusal records nothing.
"""

from uuid import UUID

from contracts.access import GrantRole, IssueApiKey, RevokeApiKey, RevokeRole
from contracts.errors import Conflict, NotFound
from contracts.sessions import EndConsoleSession, EndConsoleSessions
from services.access.domain import ApiKey, RoleHolder, holder_id_for, key_id_for
from services.access.sessions import (
    ConsoleSession,
    PersonsSessions,
    persons_sessions_id_for,
    session_id_for,
)
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.store.event_store import EventStore
from services.store.owners import load_owned


def key_created_by(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, IssueApiKey)
    return key_id_for(issued.tenant_id, command.sha256)


def holder_created_by(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, GrantRole)
    return holder_id_for(issued.tenant_id, command.subject)


def issue_api_key(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, IssueApiKey)
    if not issued.new:
        raise Conflict("this key is issued already", keyId=str(key_created_by(issued)))
    key = ApiKey.issue(
        tenant_id=issued.tenant_id,
        sha256=command.sha256,
        subject=command.subject,
        scopes=list(command.scopes),
        service=command.service,
        by=issued.actor,
        at=issued.at,
    )
    return Decision([key], {"keyId": key.id})


def revoke_api_key(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RevokeApiKey)
    key: ApiKey = load_owned(store, issued.tenant_id, command.key_id, "key")
    key.revoke(by=issued.actor, at=issued.at)
    return Decision([key], {"keyId": key.id})


def grant_role(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, GrantRole)
    holder_id = holder_created_by(issued)
    if issued.new:
        holder = RoleHolder.name(tenant_id=issued.tenant_id, subject=command.subject, at=issued.at)
    else:
        holder = load_owned(store, issued.tenant_id, holder_id, "subject")
    holder.grant(command.role, by=issued.actor, at=issued.at)
    return Decision([holder], {"subject": command.subject, "role": command.role})


def revoke_role(store: EventStore, issued: Issued) -> Decision:
    """A subject never granted anything holds no role to revoke: decided as nothing."""
    command = issued.command
    assert isinstance(command, RevokeRole)
    holder_id = holder_id_for(issued.tenant_id, command.subject)
    try:
        holder: RoleHolder = load_owned(store, issued.tenant_id, holder_id, "subject")
    except NotFound:
        return Decision([], {"subject": command.subject, "role": command.role})
    holder.revoke(command.role, by=issued.actor, at=issued.at)
    return Decision([holder], {"subject": command.subject, "role": command.role})


def session_created_by(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, EndConsoleSession)
    return session_id_for(issued.tenant_id, issued.actor, command.session_id)


def sessions_created_by(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, EndConsoleSessions)
    return persons_sessions_id_for(issued.tenant_id, command.subject)


def end_console_session(store: EventStore, issued: Issued) -> Decision:
    """Sign-out: the caller's own session, named by its id, ends (decisions D122); one
    ended already stays so, and nothing more is recorded."""
    command = issued.command
    assert isinstance(command, EndConsoleSession)
    if not issued.new:
        return Decision([], {"sessionId": command.session_id})
    session = ConsoleSession.end(
        tenant_id=issued.tenant_id,
        subject=issued.actor,
        session_id=command.session_id,
        by=issued.actor,
        at=issued.at,
    )
    return Decision([session], {"sessionId": command.session_id})


def end_console_sessions(store: EventStore, issued: Issued) -> Decision:
    """Every session of ``subject`` begun until now ends (PlatformAdmin; decisions D122)."""
    command = issued.command
    assert isinstance(command, EndConsoleSessions)
    if issued.new:
        person = PersonsSessions.name(
            tenant_id=issued.tenant_id, subject=command.subject, at=issued.at
        )
    else:
        person = load_owned(store, issued.tenant_id, sessions_created_by(issued), "subject")
    person.end_all(by=issued.actor, at=issued.at)
    return Decision([person], {"subject": command.subject})
