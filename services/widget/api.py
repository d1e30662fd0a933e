"""HTTP routes of the feedback widget (decisions D230–D239, docs/widget.md):

- ``POST /factory/widget/tokens``: the embedding site's backend exchanges its API key (a
  Requester's) for a token bound to one project, one agent and one origin, minutes long;
- ``POST /factory/widget/feedback``: the widget, from the page, with that token: a rating,
  optionally a comment and a wrong-answer report, recorded as the feedback and reports
  contexts' own commands;
- ``GET /widget/feedback.js``: the widget itself, one ES module (``static/feedback.js``).
"""

import asyncio
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials

from contracts.errors import NotFound, NotPermitted, Refused
from contracts.feedback import FeedbackKind, RecordFeedback
from contracts.reports import ComposeWrongAnswer, ReplyRecord, SubmitReport
from contracts.widget import (
    MintWidgetToken,
    WidgetFeedback,
    WidgetFeedbackRecorded,
    WidgetTokenMinted,
)
from services.declaration import Given
from services.edge.auth import Principal, WidgetBound, hash_key
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import IdempotencyKey, command_id
from services.edge.problems import WRITE_ERRORS
from services.edge.scopes import BEARER
from services.edge.widget_tokens import WidgetTokens, claims_of
from services.permissions.agent_register import registration
from services.permissions.rules import REQUESTER, require
from services.store.artifacts import put_artifact

MODULE = Path(__file__).parent / "static" / "feedback.js"
# Stamped by the server: the caller from the key, the project and the agent from the token.
MINT_STAMPED = frozenset({"tenantId", "subject", "givenBy"})
STAMPED = MINT_STAMPED | {"projectId", "agent", "agentName", "reporter"}
MINT_EXAMPLE = {
    "projectId": "shop-assistant",
    "agent": "Shop/Agent/Assistant",
    "origin": "https://shop.example",
    "minutes": 10,
}
FEEDBACK_EXAMPLE = {"subjectRef": "run-1", "rating": 4, "comment": "Clear, but it was slow."}
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]


def widget_routes(http: Http, given: Given) -> APIRouter:
    router = APIRouter(tags=["widget"])
    module = MODULE.read_bytes()
    etag = '"' + hashlib.sha256(module).hexdigest()[:32] + '"'

    @router.post(
        "/factory/widget/tokens",
        status_code=201,
        response_model=WidgetTokenMinted,
        responses=WRITE_ERRORS,
        openapi_extra=body(MintWidgetToken, MINT_EXAMPLE),
    )
    async def mint_token(request: Request, credentials: Credentials) -> dict[str, Any]:
        """Exchange an API key for a widget token: the embedding site's backend calls it,
        never the page. The key must be an API key holding Requester and
        `factory.feedback.write`; the token acts as the key's subject, as a Requester only, for
        `projectId` and `agent` (registered in the key's tenant: another is 404), from `origin`
        (configured for the tenant: another is 422), for `minutes` (1–15, default 10). It
        stops working when the key is revoked or its person erased."""
        key = None if credentials is None else credentials.credentials
        principal = await http.authorized(key, "factory.feedback.write")
        require(principal.roles, REQUESTER, "minting a widget token")  # D231
        signed = http.keys.signed
        minter = None if key is None else hash_key(key)
        if minter is None or http.keys.holder(minter) is None:
            # D233: only a key the ring holds can be asked, at each use, whether it lives.
            raise NotPermitted("a widget token is minted with an API key", field="Authorization")
        command = await read_command(request, MintWidgetToken, MINT_STAMPED)
        if command.origin not in given.settings.widget_origins.get(principal.tenant_id, []):
            raise Refused(
                "not an origin configured for this tenant's widget (FEEDBACKLOOP_WIDGET_ORIGINS)",
                field="origin",
            )
        found = await asyncio.to_thread(
            registration, given.store, principal.tenant_id, command.agent
        )
        if found is None:  # another tenant's agent is as absent as none (SPEC C51)
            raise NotFound("no such agent in the register", field="agent")
        assert isinstance(signed, WidgetTokens), "the runtime signs widget tokens"
        bound = WidgetBound(command.project_id, command.agent, command.origin)
        now = http.clock()
        claims = claims_of(principal, minter, bound, command.minutes, now)
        http.applied_here("MintWidgetToken", str(claims["jti"]))  # D235: its one row
        expires = datetime.fromtimestamp(int(now.timestamp()) + 60 * command.minutes, UTC)
        return {
            "token": signed.mint(claims),
            "expiresAt": expires.isoformat(),
            "projectId": bound.project_id,
            "agent": bound.agent,
            "origin": bound.origin,
        }

    @router.post(
        "/factory/widget/feedback",
        status_code=201,
        response_model=WidgetFeedbackRecorded,
        responses=WRITE_ERRORS,
        openapi_extra=body(WidgetFeedback, FEEDBACK_EXAMPLE),
    )
    async def widget_feedback(
        request: Request, credentials: Credentials, idempotency_key: IdempotencyKey = None
    ) -> dict[str, Any]:
        """The widget's post, with a widget token only (an API key is refused: 403). A
        rating of one answer, recorded under the token's project; with `comment`, the
        comment too; with `wrongAnswer`, a wrong-answer report on the token's agent, the
        comment as the reporter's account, submitted. An expired token is 401. With an
        `Idempotency-Key`, a repeat records nothing twice."""
        key = None if credentials is None else credentials.credentials
        principal = await http.authorized(key, None, widget=True)
        bound = principal.widget
        if bound is None:
            raise NotPermitted(
                "this route takes a widget token (POST /factory/widget/tokens)",
                field="Authorization",
            )
        origin = request.headers.get("origin")
        if origin is not None and origin != bound.origin:  # D234: the page it was minted for
            raise NotPermitted("this token was minted for another page", field="Origin")
        said = await read_command(request, WidgetFeedback, STAMPED)
        if said.wrong_answer is not None and said.comment is None:
            raise Refused("a wrong-answer report needs the comment: its account", field="comment")
        return await record(said, principal, bound, idempotency_key)

    async def record(
        said: WidgetFeedback, principal: Principal, bound: WidgetBound, key: str | None
    ) -> dict[str, Any]:
        def cid(part: str) -> str:
            return command_id(None if key is None else f"widget/{key}/{part}")

        rating = RecordFeedback(
            project_id=bound.project_id, subject_kind=said.subject_kind,
            subject_ref=said.subject_ref, kind=FeedbackKind.rating, rating=said.rating,
        )  # fmt: skip
        outcome = await http.execute(rating, principal, cid("rating"))
        answer: dict[str, Any] = {"feedbackId": str(outcome.result.feedback_id)}
        if said.comment is not None:
            # SPEC C06: a comment's text is an artifact the feedback references.
            text = said.comment.encode()
            ref = await put_artifact(http.pool, principal.tenant_id, text, "text/plain")
            comment = RecordFeedback(
                project_id=bound.project_id, subject_kind=said.subject_kind,
                subject_ref=said.subject_ref, kind=FeedbackKind.comment, comment_ref=ref,
            )  # fmt: skip
            outcome = await http.execute(comment, principal, cid("comment"))
            answer["commentFeedbackId"] = str(outcome.result.feedback_id)
        wrong = said.wrong_answer
        if wrong is not None and said.comment is not None:
            facts = ComposeWrongAnswer(
                thread=wrong.thread, message_ref=wrong.message_ref, account=said.comment,
                reply=ReplyRecord(agent_name=bound.agent, model_name=wrong.model_name),
            )  # fmt: skip
            drafted = await http.execute(facts, principal, cid("report"))
            report_id = drafted.result.report_id
            submit = SubmitReport(report_id=report_id)
            outcome = await http.execute(submit, principal, f"submit/{report_id}")
            answer["reportId"] = str(report_id)
        return {**answer, "position": http.position(outcome, principal)}

    @router.get("/widget/feedback.js", include_in_schema=False)
    async def widget_module(request: Request) -> Response:
        """The widget, public: any page may load it (the token is what is guarded)."""
        headers = {
            "Cache-Control": "public, max-age=300",
            "ETag": etag,
            "Access-Control-Allow-Origin": "*",  # a module script is fetched with CORS
            "Cross-Origin-Resource-Policy": "cross-origin",
            "X-Content-Type-Options": "nosniff",
        }
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(module, media_type="text/javascript; charset=utf-8", headers=headers)

    return router
