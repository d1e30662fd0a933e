"""Reports: what a person says about an agent's answer or about the product, and its review.

SPEC W01–W39. A report is drafted (a preview, nowhere counted or handed over), then submitted.
A submitted report is either handed over to engineering triage (published on
``evaluation.feedback.v1.feedback-handed-over`` and, where configured, a signed webhook) or
kept in the reviewer Inbox, where it moves New → Triaged → Resolved / WontFix.
"""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import AnyHttpUrl, Field, StringConstraints

from contracts.feedback import Contract
from contracts.goals import MAX_SERVES, GoalRefText
from contracts.scalars import NotBlank, Ref
from contracts.trace_links import GenAiField, SpanIdField, TraceIdField

MAX_MESSAGE = 8_000
MAX_EXTRA_CONTEXT = 16_000
MAX_TOOL_TEXT = 2_000

Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MESSAGE), NotBlank]
Category = Literal["bug", "idea", "praise", "question", "answer"]
Kind = Literal["not-found", "retrieval", "no-access", "fabricated", "outdated", "other"]
ReviewStatus = Literal["New", "Triaged", "Resolved", "WontFix"]
# Every status a report shows its reporter: a draft, a hand-over, then the review's.
ReportStatus = Literal["Draft", "HandedOver", "New", "Triaged", "Resolved", "WontFix"]


class SidePanel(Contract):
    """Where the report points: the thread and the message in it (SPEC W03)."""

    thread: Ref | None = None
    message: Ref | None = None


class DraftReport(Contract):
    """A report as a person writes it; ``message`` is kept verbatim (W02)."""

    category: Category
    message: Text
    side_panel: SidePanel | None = Field(default=None, alias="sidePanel")
    extra_context: Annotated[str, StringConstraints(max_length=MAX_EXTRA_CONTEXT)] | None = Field(
        default=None, alias="extraContext"
    )
    serves: list[GoalRefText] | None = Field(
        default=None,
        max_length=MAX_SERVES,
        description="Goal references `kind:id` (charter, task, project, setpoint) this served "
        "(SPEC M01–M05): a malformed one is refused, naming it.",
    )
    trace_id: TraceIdField = None
    span_id: SpanIdField = None
    gen_ai: GenAiField = None


class ToolCallRecord(Contract):
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    arguments: Annotated[str, StringConstraints(max_length=MAX_TOOL_TEXT)] = ""
    result: Annotated[str, StringConstraints(max_length=MAX_TOOL_TEXT)] = ""


class ReplyRecord(Contract):
    """The record of the reported reply, as the chat client already holds it (W16)."""

    agent_name: Ref = Field(alias="agentName", description="The agent's path (W06).")
    model_name: Ref = Field(alias="modelName")
    requested_model_name: Ref | None = Field(default=None, alias="requestedModelName")
    harness: Ref | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list, alias="toolCalls", max_length=50)
    text: Annotated[str, StringConstraints(max_length=MAX_EXTRA_CONTEXT)] = ""


class EvidenceCheck(Contract):
    """The check the client ran under the reporter's identity (W12, W14)."""

    node: Ref = Field(description="The node the answer should have come from.")
    readable: bool = Field(description="Could the reporter read it?")


class ComposeWrongAnswer(Contract):
    """The facts of a wrong answer; the server composes the labelled block (W04–W13)."""

    thread: Ref
    message_ref: Ref = Field(alias="messageRef", description="The reported reply's message.")
    prompt: Text | None = Field(
        default=None,
        description="The user's message the reply answered, read from the thread; an eval "
        "case lifted from the report asks it again.",
    )
    context: list[Ref] = Field(
        default_factory=list, max_length=50, description="That message's context paths."
    )
    reply: ReplyRecord
    account: Text = Field(description="The reporter's own words, kept verbatim.")
    expected: Annotated[str, StringConstraints(max_length=MAX_MESSAGE)] | None = None
    evidence: EvidenceCheck | None = None
    kind: Kind | None = Field(
        default=None,
        description="What the content of the answer was wrong about, when the check alone "
        "cannot tell (fabricated, outdated, other); the check decides the rest (W15).",
    )
    maintainers: list[Ref] = Field(default_factory=list, max_length=20)
    serves: list[GoalRefText] | None = Field(
        default=None,
        max_length=MAX_SERVES,
        description="Goal references `kind:id` (charter, task, project, setpoint) this served "
        "(SPEC M01–M05): a malformed one is refused, naming it.",
    )
    trace_id: TraceIdField = None
    span_id: SpanIdField = None
    gen_ai: GenAiField = None


class ReviewReport(Contract):
    """Move a report in the Inbox; ``reviewedBy`` is stamped from the caller."""

    status: ReviewStatus
    change: Annotated[str, StringConstraints(max_length=MAX_MESSAGE)] | None = Field(
        default=None, description="For Resolved: what changed, so the reporter can be told."
    )
    link: AnyHttpUrl | None = None
    reason: Annotated[str, StringConstraints(max_length=MAX_MESSAGE)] | None = None


class ReportHandedOver(Contract):
    """Published on ``evaluation.feedback.v2.feedback-handed-over`` for engineering triage.

    The reporter's words are not in it: ``reportPath`` names where a subscriber reads them,
    through the API, which shows them as erased once the reporter is (decisions D74)."""

    report_id: UUID = Field(alias="reportId")
    tenant_id: str = Field(alias="tenantId")
    category: Category
    report_path: str = Field(
        alias="reportPath",
        description="`GET` this path of the API (scope factory.feedback.read, the report's "
        "tenant) for the message and extra context; the person's text never rides on Kafka.",
    )
    side_panel: SidePanel | None = Field(default=None, alias="sidePanel")


class AgentOwnerNotified(Contract):
    """Published on ``evaluation.feedback.v1.agent-owner-notified`` for agent-owner kinds."""

    report_id: UUID = Field(alias="reportId")
    tenant_id: str = Field(alias="tenantId")
    kind: Kind
    agent: str
    addressee: str


class ReportResolved(Contract):
    """Published on ``evaluation.feedback.v2.report-resolved`` when a report is Resolved or
    closed WontFix: the outcome, for the person who reported it (SPEC W33, decisions D51).

    It names nobody (decisions D139): whom to tell and what changed are read at
    ``reportPath``, through the API, which applies the tenant and erasure (as D74's hand-over).
    v1 carried the reporter's id and the review's words."""

    report_id: UUID = Field(alias="reportId")
    tenant_id: str = Field(alias="tenantId")
    outcome: Literal["Resolved", "WontFix"]
    report_path: str = Field(
        alias="reportPath",
        description="`GET` this path of the API (scope factory.feedback.read, the report's "
        "tenant): `reporter` is the person to tell, `review` holds the change, link or reason. "
        "Once the reporter is erased it names them `erased:<hex>`: tell nobody.",
    )


STAMPED_REPORT_FIELDS = frozenset({"tenantId", "reporter", "reviewedBy", "reportId", "givenBy"})


class SubmitReport(Contract):
    report_id: UUID = Field(alias="reportId")


class ReviewReportCommand(Contract):
    """``ReviewReport`` with the report it is about and who reviews (stamped)."""

    report_id: UUID = Field(alias="reportId")
    review: ReviewReport


class RecordReporterNoticeDelivery(Contract):
    """One webhook delivery attempt of a ``report-resolved`` notice (issued by the webhook's
    reader, not a client)."""

    report_id: UUID = Field(alias="reportId")
    status_code: int | None = Field(default=None, alias="statusCode")
    error: str | None = None
    final: bool


class RecordHandOverDelivery(Contract):
    """One webhook delivery attempt of a hand-over (issued by the dispatcher, not a client)."""

    report_id: UUID = Field(alias="reportId")
    status_code: int | None = Field(default=None, alias="statusCode")
    error: str | None = None
    final: bool
