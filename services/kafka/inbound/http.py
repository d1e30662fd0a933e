"""The inbound door over HTTP (embedded mode): ``POST /factory/events``.

Without Kafka, a neighbour service (or a person trying things) posts the same structured
CloudEvent it would produce to a topic, of any type a context declares (its
``subscriptions``). It is read by the very function the Kafka consumer uses
(``parsing.parse_event``), admitted by the same checks, and applied through the bus under the
same identity (``source`` + ``id``): a repeat, over either door, is applied once.

Who may post: a key with the scope its type's subscription declares (``Subscription.scope``),
the scope of the HTTP route that writes the same fact (SPEC C52): a DraftReleaseOpened needs
``factory.assets.write`` as the release callback does, a RecordFeedback
``factory.feedback.write`` as ``POST /factory/feedback`` does. A key without it is refused (403
``forbidden`` naming the scope) before the payload is read, and nothing is recorded. The
tenant is the key's: a ``tenantid`` attribute naming another is refused (403); left out, it is
the key's. So is the ``actor``: one naming another subject is refused, left out it is the
key's subject.
"""

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials

from contracts.answers import EventApplied
from contracts.envelope import MAX_MESSAGE_BYTES
from contracts.errors import NotPermitted, Refused
from services.edge.auth import Principal
from services.edge.bodies import media_type
from services.edge.http import Http
from services.edge.json_answers import answer_json
from services.edge.json_bodies import parse_json
from services.edge.problems import (
    WRITE_ERRORS,
    Forbidden,
    TooLarge,
    error_responses,
)
from services.edge.scopes import BEARER
from services.kafka.inbound.parsing import parse_event
from services.kafka.inbound.subscription import Subscription
from services.permissions.sources import acting

MEDIA_TYPE = "application/cloudevents+json"
EXAMPLE = {
    "specversion": "1.0",
    "id": "run-1-completed",
    "source": "urn:run-control",
    "type": "factory.runs.v1.RunCompleted",
    "datacontenttype": "application/json",
    "data": {
        "runId": "run-1",
        "agentId": "coach",
        "outcome": "succeeded",
        "inputRef": "artifact:sha256:" + "a" * 64,
        "outputRef": "artifact:sha256:" + "b" * 64,
        "completedAt": "2026-11-30T10:00:00Z",
    },
}


def event_routes(http: Http, subscriptions: Sequence[Subscription]) -> APIRouter:
    by_type = {subscription.cloudevent_type: subscription for subscription in subscriptions}
    router = APIRouter(prefix="/factory/events", tags=["events"])
    body_doc = {
        "requestBody": {
            "required": True,
            "content": {MEDIA_TYPE: {"schema": {"type": "object"}, "example": EXAMPLE}},
        }
    }

    description = (
        "Apply one structured CloudEvent of a declared type, as the Kafka consumer would "
        "(201; a repeat of its `source` + `id` in the same tenant answers 200 and applies "
        "nothing). Each type needs the scope of the HTTP route that writes the same fact "
        "(403 naming it otherwise): "
        + ", ".join(f"`{name}` ({by_type[name].scope})" for name in sorted(by_type))
        + "."
    )

    async def caller(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> Principal:
        """The key's principal, whatever its scopes: which scope is needed depends on the
        event's type, checked once the type is read (``permitted``)."""
        key = None if credentials is None else credentials.credentials
        return await http.authorized(key, None)

    @router.post("", status_code=201, response_model=EventApplied,
                 responses={200: {"model": EventApplied, "description": "A repeat"},
                            **WRITE_ERRORS, **error_responses(415)},
                 openapi_extra=body_doc, description=description)  # fmt: skip
    async def receive(
        request: Request,
        principal: Annotated[Principal, Depends(caller)],
    ) -> Response:
        """A neighbour's event or a command, over HTTP (embedded mode)."""
        media_type(request, (MEDIA_TYPE,))  # the structured mode only: 415 otherwise
        raw = await request.body()
        if len(raw) > MAX_MESSAGE_BYTES:
            raise TooLarge(MAX_MESSAGE_BYTES)
        event = parse_json(raw)
        permitted(event, by_type, principal)
        value = stamped(event, principal)
        headers = {"content-type": MEDIA_TYPE.encode()}
        subscription, issued = parse_event(
            value,
            None,
            headers,
            by_type,
            http.clock,
            lambda sent: acting(principal.roles, sent.role),
        )
        issued = replace(issued, service=principal.service)
        if subscription.admit is not None:
            await subscription.admit(http.pool, issued)
        outcome = await http.bus.execute(issued)
        answer = {
            "type": subscription.cloudevent_type,
            "applied": not outcome.already_applied,
            "position": http.position(outcome, principal),
        }
        status = 200 if outcome.already_applied else 201
        return Response(answer_json(answer), status_code=status, media_type="application/json")

    return router


def permitted(event: Any, by_type: dict[str, Subscription], principal: Principal) -> None:
    """Refuse (403) a key without the scope its event's type needs, before anything of the
    event is read or recorded. A type nobody declared is left for ``parse_event`` to refuse
    (422 naming ``type``), as is a body that is no JSON object."""
    if not isinstance(event, dict):
        return
    kind = event.get("type")
    subscription = by_type.get(kind) if isinstance(kind, str) else None
    if subscription is not None and subscription.scope not in principal.scopes:
        raise Forbidden(subscription.scope)


def stamped(event: Any, principal: Principal) -> bytes:
    """The event with the caller's tenant and subject, which it may leave out but never
    contradict."""
    if not isinstance(event, dict):
        raise Refused("a structured CloudEvent is a JSON object", field="body")
    if not event.get("id"):
        # The CloudEvents SDK would make one up: a retry would then be another event.
        raise Refused(
            "id: the event's id is required (its identity is the tenant's source + id)", field="id"
        )
    for attribute, own in (("tenantid", principal.tenant_id), ("actor", principal.subject)):
        given = event.get(attribute)
        if given is None:
            event[attribute] = own
        elif given != own:
            raise NotPermitted(
                f"{attribute} must be this key's ({own}), or left out", field=attribute
            )
    return json.dumps(event).encode()
