"""HTTP routes of keys, roles and the audit (SPEC C52; decisions D28–D30), tenant-scoped.

``/factory/keys`` and ``/factory/roles`` are a PlatformAdmin's: the handlers refuse anyone
else (403 ``not-permitted``), and the lists are refused alike. ``/factory/audit`` is a
PlatformAdmin's and an Observer's. Any valid key reaches these routes; the role is the rule.
"""

from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError

from contracts.access import (
    AuditPage,
    Changed,
    GrantList,
    GrantRole,
    IssueApiKey,
    KeyIssued,
    KeyList,
    NewApiKey,
    RevokeApiKey,
    RevokeRole,
)
from contracts.errors import Refused
from contracts.sessions import EndConsoleSessions
from projections.access import list_grants, list_keys
from services.bus.audit import AuditFilter, audit_page
from services.edge.auth import SCOPES, Principal, hash_key, new_key
from services.edge.bodies import no_body, read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, Instant, Limit, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.edge.scopes import BEARER
from services.permissions.rules import require

ADMIN = "PlatformAdmin"
OBSERVER = "Observer"
NOTHING_STAMPED: frozenset[str] = frozenset()
Since = Annotated[Instant | None, Query(description="From this instant (inclusive)")]
Until = Annotated[Instant | None, Query(description="Up to this instant (exclusive)")]


def holding(principal: Principal, *roles: str) -> None:
    """A read refused as a command of the same caller would be: 403 naming the role."""
    require(principal.roles, roles, "reading this")


def known_scopes(scopes: list[str]) -> None:
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise Refused(f"unknown scopes {unknown}; known: {', '.join(SCOPES)}", field="scopes")


def access_routes(http: Http) -> APIRouter:
    router = APIRouter(tags=["access"])

    # Any known key; the role is checked where the command is decided (and by ``holding``).
    async def caller(credentials: Annotated[Any, Depends(BEARER)]) -> Principal:
        return http.authorize(None if credentials is None else credentials.credentials, None)

    Caller = Annotated[Principal, Depends(caller)]

    @router.post(
        "/factory/keys",
        status_code=201,
        response_model=KeyIssued,
        responses=WRITE_ERRORS,
        openapi_extra=body(NewApiKey, {"subject": "bruno", "scopes": ["factory.feedback.read"]}),
    )
    async def issue_key(request: Request, principal: Caller) -> dict[str, Any]:
        """Issue a key of your tenant (PlatformAdmin): the key is answered this once; only
        its hash is kept. Its holder's roles are those granted to its subject."""
        asked = await read_command(request, NewApiKey, NOTHING_STAMPED)
        known_scopes(asked.scopes)
        key, _ = new_key(principal.tenant_id, asked.subject, list(asked.scopes))
        command = IssueApiKey(
            sha256=hash_key(key), subject=asked.subject, scopes=asked.scopes, service=asked.service
        )
        outcome = await http.execute(command, principal, command_id(None))
        await http.keys_moved(outcome)
        return {
            "keyId": str(outcome.result["keyId"]),
            "key": key,
            "position": http.position(outcome, principal),
        }

    @router.post(
        "/factory/keys/{key_id:uuid}/revoke", response_model=Changed, responses=WRITE_ERRORS
    )
    async def revoke_key(key_id: UUID, request: Request, principal: Caller) -> dict[str, Any]:
        """Revoke a key of your tenant (PlatformAdmin): its next request is refused (401)."""
        await no_body(request)
        outcome = await http.execute(RevokeApiKey(key_id=key_id), principal, command_id(None))
        await http.keys_moved(outcome)
        return {"position": http.position(outcome, principal)}

    @router.get("/factory/keys", response_model=KeyList, responses=READ_ERRORS)
    async def keys(
        principal: Caller,
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The keys issued in your tenant through the store (PlatformAdmin), newest first,
        revoked ones too; configured keys live in the settings and are not listed."""
        holding(principal, ADMIN)
        await http.read_at("access", min_position, principal)
        found, last = await list_keys(
            http.pool, principal.tenant_id, before=http.cursor(before, principal), limit=limit
        )
        return {"items": found, "next": http.sealed(last, principal)}

    @router.post(
        "/factory/roles/grant",
        response_model=Changed,
        responses=WRITE_ERRORS,
        openapi_extra=body(GrantRole, {"subject": "bruno", "role": "Reviewer"}),
    )
    async def grant(request: Request, principal: Caller) -> dict[str, Any]:
        """Grant a role of your tenant to a subject (PlatformAdmin); a role held already is
        left as it is. Its holder's next request has it."""
        command = await read_command(request, GrantRole, NOTHING_STAMPED)
        outcome = await http.execute(command, principal, command_id(None))
        await http.keys_moved(outcome)
        return {"position": http.position(outcome, principal)}

    @router.post(
        "/factory/roles/revoke",
        response_model=Changed,
        responses=WRITE_ERRORS,
        openapi_extra=body(RevokeRole, {"subject": "bruno", "role": "Reviewer"}),
    )
    async def revoke(request: Request, principal: Caller) -> dict[str, Any]:
        """Revoke a subject's role (PlatformAdmin); its holder's next request lacks it. A
        role granted by the settings (a configured key's) is not the store's to revoke."""
        command = await read_command(request, RevokeRole, NOTHING_STAMPED)
        outcome = await http.execute(command, principal, command_id(None))
        await http.keys_moved(outcome)
        return {"position": http.position(outcome, principal)}

    @router.post(
        "/factory/console-sessions/end",
        response_model=Changed,
        responses=WRITE_ERRORS,
        openapi_extra=body(EndConsoleSessions, {"subject": "bruno"}),
    )
    async def end_sessions(request: Request, principal: Caller) -> dict[str, Any]:
        """End every console session of a subject of your tenant begun until now
        (PlatformAdmin; decisions D122): each one's next request, to any process, is sent to
        sign in. Their keys and roles are left as they are."""
        command = await read_command(request, EndConsoleSessions, NOTHING_STAMPED)
        outcome = await http.execute(command, principal, command_id(None))
        await http.keys_moved(outcome)  # the access read model holds the end, as it does keys
        return {"position": http.position(outcome, principal)}

    @router.get("/factory/roles", response_model=GrantList, responses=READ_ERRORS)
    async def roles(
        principal: Caller,
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The roles granted in your tenant through the store (PlatformAdmin), by subject
        then role."""
        holding(principal, ADMIN)
        await http.read_at("access", min_position, principal)

        async def fetch(after: str | None) -> tuple[list[dict[str, Any]], str | None]:
            pair = None
            if after is not None:
                role, _, subject = after.partition("/")  # a role never holds a '/'
                pair = (subject, role)
            found, last = await list_grants(http.pool, principal.tenant_id, after=pair, limit=limit)
            return found, None if last is None else f"{last[1]}/{last[0]}"

        found, next_page = await http.keyed_page("roles", before, principal, fetch)
        return {"items": found, "next": next_page}

    @router.get("/factory/audit", response_model=AuditPage, responses=READ_ERRORS)
    async def audit(
        principal: Caller,
        actor: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
        aggregate: UUID | None = None,
        since: Since = None,
        until: Until = None,
        before: Before = None,
        limit: Limit = PAGE,
    ) -> dict[str, Any]:
        """Every command decided in your tenant (PlatformAdmin, Observer), newest first:
        who, in which roles, when, which command on which aggregates, and how it ended
        (applied, refused with its error code); filtered by `actor`, `aggregate` and the
        window `since`/`until`; a page at a time."""
        holding(principal, ADMIN, OBSERVER)
        in_order(since, until)
        await http.bus.flush_audit()  # this process's latest decisions too
        where = AuditFilter(actor, aggregate, since, until)

        async def fetch(after: str | None) -> tuple[list[dict[str, Any]], int | None]:
            return await audit_page(
                http.pool,
                principal.tenant_id,
                where,
                before=None if after is None else int(after),
                limit=limit,
            )

        found, next_page = await http.keyed_page("audit", before, principal, fetch)
        return {"items": found, "next": next_page}

    return router


def in_order(since: datetime | None, until: datetime | None) -> None:
    """A window that ends before it starts is a mistake, answered as an invalid parameter."""
    if since is not None and until is not None and since > until:
        message = f"since ({since.isoformat()}) is after until ({until.isoformat()})"
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", "since"), "msg": message, "input": None}]
        )
