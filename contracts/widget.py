"""The feedback widget's bodies: minting its token (the embedding site's backend) and what the
widget posts (the page's user). Decisions D230–D239, docs/widget.md.

A widget token acts as the minting key's subject, as a Requester only, for one project and
one agent of the key's tenant, from one embedding origin, for at most ``MAX_TOKEN_MINUTES``.
What it posts becomes the service's own commands (RecordFeedback, ComposeWrongAnswer,
SubmitReport) with the project and the agent taken from the token, never from the body.
"""

from typing import Annotated

from pydantic import Field, StringConstraints

from contracts import example_story as examples
from contracts.answers import Answer, shown_as
from contracts.feedback import RATING_MAX, RATING_MIN, Contract, SubjectKind
from contracts.scalars import NotBlank, Ref

# Decisions D232: minutes long, never more than a quarter of an hour.
MIN_TOKEN_MINUTES, MAX_TOKEN_MINUTES, DEFAULT_TOKEN_MINUTES = 1, 15, 10
MAX_COMMENT = 2_000

# An origin as a browser sends it in ``Origin``: scheme, host, optional port, nothing more.
ORIGIN_PATTERN = r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$"
Origin = Annotated[str, StringConstraints(max_length=300, pattern=ORIGIN_PATTERN)]
Comment = Annotated[str, StringConstraints(min_length=1, max_length=MAX_COMMENT), NotBlank]


class MintWidgetToken(Contract):
    """Exchange an API key (a Requester's) for a short-lived widget token (D230–D233)."""

    project_id: Ref = Field(
        alias="projectId", description="The project every rating is recorded under."
    )
    agent: Ref = Field(
        description="The agent whose answers the widget rates: registered in the key's tenant."
    )
    origin: Origin = Field(
        description="The embedding page's origin (https://shop.example): one configured for "
        "the tenant in FEEDBACKLOOP_WIDGET_ORIGINS."
    )
    minutes: int = Field(
        default=DEFAULT_TOKEN_MINUTES,
        ge=MIN_TOKEN_MINUTES,
        le=MAX_TOKEN_MINUTES,
        description="How long the token lives.",
    )


class WidgetTokenMinted(Answer):
    model_config = shown_as(
        {
            "token": "eyJhbGciOiJIUzI1NiIsInR5cCI6ImZsLXdpZGdldCtqd3QifQ.eyJ0ZW5hbnQiOiJkZW1vIn0."
            "c2lnbmF0dXJl",
            "expiresAt": "2026-12-05T09:10:00+00:00",
            "projectId": "shop-assistant",
            "agent": "Shop/Agent/Assistant",
            "origin": "https://shop.example",
        }
    )

    token: str = Field(description="A bearer token for the widget's routes only.")
    expires_at: str = Field(alias="expiresAt", description="When it stops working (UTC).")
    project_id: str = Field(alias="projectId")
    agent: str
    origin: str


class WidgetWrongAnswer(Contract):
    """Where the rated answer is, for a wrong-answer report (SPEC W03, W07); the agent is the
    token's."""

    thread: Ref
    message_ref: Ref = Field(alias="messageRef")
    model_name: Ref = Field(alias="modelName")


class WidgetFeedback(Contract):
    """What the widget posts: a rating of one answer, optionally a comment, optionally the
    report that the answer was wrong (the comment is then the reporter's account)."""

    subject_ref: Ref = Field(alias="subjectRef", description="The rated answer (a run's id).")
    subject_kind: SubjectKind = Field(default=SubjectKind.run, alias="subjectKind")
    rating: int = Field(ge=RATING_MIN, le=RATING_MAX)
    comment: Comment | None = None
    wrong_answer: WidgetWrongAnswer | None = Field(default=None, alias="wrongAnswer")


class WidgetFeedbackRecorded(Answer):
    model_config = shown_as(
        {
            "feedbackId": examples.RATING_ID,
            "commentFeedbackId": "5b1e8f9a-2c3d-5e4f-8a9b-0c1d2e3f4a5b",
            "reportId": None,
            "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf",
        }
    )

    feedback_id: str = Field(alias="feedbackId", description="The rating.")
    comment_feedback_id: str | None = Field(default=None, alias="commentFeedbackId")
    report_id: str | None = Field(default=None, alias="reportId")
    position: str
