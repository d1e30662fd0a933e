"""HTTP routes of privacy: erase a person, export what is held about them (PlatformAdmin)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path

from contracts.answers import PersonErasure, PersonExport
from contracts.privacy import ErasePerson
from services.bus.decisions import Outcome
from services.bus.issued import Issued
from services.declaration import Given
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.parameters import command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS, error_responses
from services.permissions.rules import READERS
from services.privacy.erasing import erase, export

WRITE, READ = "factory.feedback.write", "factory.feedback.read"
Person = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^\S+$")]


def privacy_routes(http: Http, given: Given) -> APIRouter:
    router = APIRouter(prefix="/factory/people", tags=["privacy"])

    @router.delete("/{person}", response_model=PersonErasure, responses=WRITE_ERRORS)
    async def erase_person(
        person: Person, principal: Annotated[Principal, Depends(http.scope(WRITE))]
    ) -> dict[str, Any]:
        """Erase a person of the caller's tenant (PlatformAdmin; decisions D43): their data
        keys destroyed, so their words and name in every event read as erased; `person-erased`
        recorded and published; their comment artifacts deleted; every read model rebuilt.
        Their stored API keys are revoked and their roles taken back first (decisions D146):
        their next request is refused. Counts and decisions stay. Answers when the read
        models are swapped in."""
        issued = Issued(
            ErasePerson(person=person), principal.tenant_id, principal.subject,
            command_id(None), http.clock(), service=principal.service, roles=principal.roles,
        )  # fmt: skip
        done = await erase(
            given.store, given.bus, given.pool, issued, given.rebuild, given.keys.entries
        )
        # The revocations are in this process's ring before the answer (decisions D29).
        await http.keys_moved(Outcome(done, done["position"]))
        return {**done, "position": http.sealed(done["position"], principal)}

    @router.get(
        "/{person}/export",
        response_model=PersonExport,
        # 409: an event of the person's does not open, an incident (decisions D145).
        responses={**READ_ERRORS, **error_responses(409)},
    )
    async def export_person(
        person: Person,
        principal: Annotated[Principal, Depends(http.reading(READ, READERS))],
    ) -> dict[str, Any]:
        """Everything the service holds about a person of the caller's tenant, as JSON
        (PlatformAdmin; decisions D46): their events, decoded, and their artifacts. When an
        event of theirs holds a sealed box that fails authentication (tampered with or
        corrupted), 409 `unreadable` names the incident and where, rather than an export
        lacking it (decisions D145)."""
        return await export(given.store, given.pool, principal.tenant_id, person, principal.roles)

    return router
