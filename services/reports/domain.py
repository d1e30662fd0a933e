"""The Report aggregate: drafted, submitted, then handed over or reviewed in the Inbox.

    Draft ──submit──► HandedOver                     (ShouldHandOver: SPEC §3.2, W19–W31)
      └─────submit──► New ──► Triaged ──► Resolved | WontFix      (W32, W33)
                                               └─► ReporterNotified (report-resolved, D51)

A draft is a preview: it is nowhere counted or handed over (W27). Every review step is its
own event with ``reviewed_by`` stamped from the caller. A hand-over's webhook deliveries are
recorded attempt by attempt; one that fails for good puts the report in the Inbox.

The labelled block's facts are decided before the report is drafted (``contracts.report_facts``)
and travel on ``Drafted``; nothing here parses text, except the upcaster of events written
before the facts were stored.
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from contracts.errors import InvalidTransition, NotFound
from contracts.labelled_block import LabelledBlock, parse
from contracts.report_facts import ReportFacts, block_of, facts_of
from contracts.report_kinds import canonical_kind, parse_kind
from contracts.reports import DraftReport
from contracts.trace_links import check_trace_links, trace_fields
from services.reports.review_moves import check_review_move
from services.reports.routing import addressee_text, is_agent_owner_kind, should_hand_over
from services.store.sealing import Personal


def received(status_code: int | None) -> bool:
    """Whether a webhook's receiver took a delivery: it answered 2xx."""
    return status_code is not None and 200 <= status_code < 300


class Report(Aggregate):
    class Drafted(Aggregate.Created):
        class_version = 2  # v2 stores the block's facts; v1 held only the text
        # The reporter's words and name, sealed under their key of the month (decisions D42,
        # D45); the report's later events are sealed under the same key.
        personal = Personal(
            text=(
                "message", "extra_context", "prompt", "context", "facts.message",
                "facts.answer_excerpt", "facts.expected", "facts.evidence",
                # A thread's or message's ref begins with the reporter's id; a tool call's
                # arguments and the block's unknown labels are their words too (D130).
                "thread", "message_ref", "facts.thread", "facts.tools_called", "facts.extra",
                # The Addressee: the service names maintainers by role (D133); what a
                # reporter typed there is their words.
                "facts.addressee",
            ),
            identity=("reporter",),
            person="reporter",
            binds=True,
            dated=True,
        )  # fmt: skip

        tenant_id: str
        reporter: str
        category: str
        message: str
        thread: str | None
        message_ref: str | None
        extra_context: str | None
        command_id: str
        prompt: str | None
        context: list[str]
        facts: ReportFacts | None  # None: the report has no labelled block (W38)
        serves: list[str] | None = None  # goal refs; events older than goals have none
        # The trace of the reported answer (D261); events older than trace links have none.
        trace_id: str | None = None
        span_id: str | None = None
        gen_ai: dict[str, str] | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A v1 event kept only the text: parse it once, as the command handler does at
            the door, so every reader of an old report sees facts like a new one's. The only
            place here that parses: a parser change can reach only events written before v2."""
            state["facts"] = facts_of(parse(state.get("extra_context")))

    # The events, declared so that readers (the Inbox, the relay) can name them.
    class Submitted(Aggregate.Event):
        pass

    class HandedOver(Aggregate.Event):
        # The draft's key; a thread's or message's ref begins with the reporter's id (D130).
        personal = Personal(text=("message", "extra_context", "thread", "message_ref"))

        tenant_id: str
        category: str
        message: str
        thread: str | None
        message_ref: str | None
        extra_context: str | None

    class AgentOwnerNotified(Aggregate.Event):
        class_version = 2  # v2 always holds a canonical kind

        personal = Personal(text=("addressee",))  # the report's Addressee, its key (D133)

        tenant_id: str
        kind: str
        agent: str
        addressee: str

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """v1 copied the kind as typed (``Fabricated``), which the published
            contract's closed set refuses; such a notice is only ever of a known kind, so its
            canonical spelling is what it meant."""
            state["kind"] = canonical_kind(state["kind"])

    # The reviewer's id under the reviewer's own key (D130): ``tenant_id`` names whose keys;
    # a review written before it had one keeps its reviewer plain (D131).
    class Triaged(Aggregate.Event):
        personal = Personal(names={"reviewed_by": "Reviewer"})

        reviewed_by: str
        tenant_id: str = ""

    class Resolved(Aggregate.Event):
        # the reviewer's words, with the report's
        personal = Personal(text=("change", "link"), names={"reviewed_by": "Reviewer"})

        reviewed_by: str
        change: str | None
        link: str | None
        tenant_id: str = ""

    class WontFix(Aggregate.Event):
        # the reviewer's words, with the report's
        personal = Personal(text=("reason",), names={"reviewed_by": "Reviewer"})

        reviewed_by: str
        reason: str | None
        tenant_id: str = ""

    class ReporterNotified(Aggregate.Event):
        """The outcome told to the reporter (published as ``report-resolved``): it carries
        the reporter, whom ``Resolved`` and ``WontFix`` do not name (decisions D51)."""

        # The reporter and the review's words, under the draft's key (decisions D42).
        personal = Personal(text=("change", "link", "reason"), identity=("reporter",))

        tenant_id: str
        reporter: str
        outcome: str  # Resolved | WontFix
        change: str | None
        link: str | None
        reason: str | None

    # A reviewer's annotations (decisions D170–D174). The corrected Kind and Addressee are
    # from closed sets and name nobody; the reviewer is named under their own key (D130).
    class KindCorrected(Aggregate.Event):
        personal = Personal(names={"corrected_by": "Reviewer"})

        tenant_id: str
        kind: str
        addressee: str
        corrected_by: str

    class Tagged(Aggregate.Event):
        personal = Personal(names={"tagged_by": "Reviewer"})  # a tag names nobody (D172)

        tenant_id: str
        tag: str
        tagged_by: str

    class NoteAdded(Aggregate.Event):
        # The reviewer's words, sealed under the reviewer's key, not the report's (D173): the
        # reviewer's erasure reaches them, the reporter's does not.
        personal = Personal(text=("words",), identity=("noted_by",), person="noted_by")

        tenant_id: str
        words: str
        noted_by: str

    class ReporterNoticeDeliveryAttempted(Aggregate.Event):
        attempt: int
        status_code: int | None
        error: str | None
        final: bool

    class HandOverDeliveryAttempted(Aggregate.Event):
        attempt: int
        status_code: int | None
        error: str | None

    class HandOverDeliveryFailed(Aggregate.Event):
        attempts: int
        error: str | None

    def __init__(
        self,
        tenant_id: str,
        reporter: str,
        category: str,
        message: str,
        thread: str | None,
        message_ref: str | None,
        extra_context: str | None,
        command_id: str,
        prompt: str | None,
        context: list[str],
        facts: ReportFacts | None,
        serves: list[str] | None = None,
        trace_id: str | None = None,
        span_id: str | None = None,
        gen_ai: dict[str, str] | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        self.reporter = reporter
        self.category = category
        self.message = message
        self.thread = thread
        self.message_ref = message_ref
        self.extra_context = extra_context
        self.command_id = command_id
        self.prompt = prompt  # the question the reported reply answered, if known
        self.context = context
        self.facts: LabelledBlock | None = block_of(facts)
        self.serves = serves
        self.trace_id, self.span_id, self.gen_ai = trace_id, span_id, gen_ai
        self.status = "Draft"
        self.delivery_attempts = 0
        self.delivery_settled = False  # the webhook got its hand-over, or gave up
        self.notice_attempts = 0
        self.notice_settled = False  # the webhook got the reporter's notice, or gave up
        block = self.facts  # the reporter's Kind and Addressee, in force until corrected
        self.kind_in_force = canonical_kind(block.kind) if block and block.kind else None
        self.addressee_in_force = block.addressee if block else None
        self.tags: set[str] = set()

    @classmethod
    def draft(
        cls,
        command: DraftReport,
        *,
        report_id: UUID,
        tenant_id: str,
        reporter: str,
        at: datetime,
        command_id: str,
        facts: LabelledBlock | None,
        prompt: str | None = None,
        context: list[str] | None = None,
    ) -> "Report":
        """``facts`` is the labelled block as decided at the door: from the structured record
        for a composed report, parsed once from ``extraContext`` for free text."""
        panel = command.side_panel
        check_trace_links(command.trace_id, command.span_id)
        return cls._create(
            cls.Drafted,
            id=report_id,
            timestamp=at,
            tenant_id=tenant_id,
            reporter=reporter,
            category=command.category,
            message=command.message,
            thread=panel.thread if panel else None,
            message_ref=panel.message if panel else None,
            extra_context=command.extra_context,
            command_id=command_id,
            prompt=prompt,
            context=list(context or []),
            facts=facts_of(facts),
            serves=list(command.serves) if command.serves else None,
            **trace_fields(command.trace_id, command.span_id, command.gen_ai),
        )

    def check_visible_to(self, actor: str) -> None:
        """A draft is its author's until submitted (W27: a draft is not a report
        yet): to anyone else it is as absent as a report that does not exist."""
        if self.status == "Draft" and self.reporter != actor:
            raise NotFound(f"no report {self.id}", id=str(self.id))

    def submit(self, *, at: datetime) -> None:
        """Submit a draft: hand it over or keep it in the Inbox; submitting twice is a no-op."""
        if self.status != "Draft":
            return
        if should_hand_over(self.category, self.message):
            self._handed_over(
                timestamp=at,
                tenant_id=self.tenant_id,
                category=self.category,
                message=self.message,
                thread=self.thread,
                message_ref=self.message_ref,
                extra_context=self.extra_context,
            )
        else:
            self._submitted(timestamp=at)
        block = self.facts
        kind = parse_kind(block.kind) if block else None
        if block and kind and is_agent_owner_kind(kind) and block.agent:
            self._agent_owner_notified(
                timestamp=at,
                tenant_id=self.tenant_id,
                kind=kind.value,  # the published Kind is a closed set: only ever canonical
                agent=block.agent,
                addressee=block.addressee or addressee_text(kind, block.agent, []),
            )

    @event(Submitted)
    def _submitted(self, timestamp: datetime) -> None:
        self.status = "New"

    @event(HandedOver)
    def _handed_over(  # carries what is handed over: its consumers read nothing else
        self,
        tenant_id: str,
        category: str,
        message: str,
        thread: str | None,
        message_ref: str | None,
        extra_context: str | None,
        timestamp: datetime,
    ) -> None:
        self.status = "HandedOver"

    @event(AgentOwnerNotified)
    def _agent_owner_notified(
        self, tenant_id: str, kind: str, agent: str, addressee: str, timestamp: datetime
    ) -> None:
        pass

    def review(
        self,
        status: str,
        *,
        reviewed_by: str,
        at: datetime,
        change: str | None = None,
        link: str | None = None,
        reason: str | None = None,
    ) -> None:
        check_review_move(self.status, status)  # W32
        if status == "Triaged":
            self._triaged(timestamp=at, reviewed_by=reviewed_by, tenant_id=self.tenant_id)
            return
        if status == "Resolved":
            self._resolved(
                timestamp=at, reviewed_by=reviewed_by, change=change, link=link,
                tenant_id=self.tenant_id,
            )  # fmt: skip
            reason = None
        else:
            self._wont_fix(
                timestamp=at, reviewed_by=reviewed_by, reason=reason, tenant_id=self.tenant_id
            )
            change = link = None
        # W33: what was decided goes back to the one who reported it.
        self._reporter_notified(
            timestamp=at, tenant_id=self.tenant_id, reporter=self.reporter, outcome=status,
            change=change, link=link, reason=reason,
        )  # fmt: skip

    @event(Triaged)
    def _triaged(self, reviewed_by: str, timestamp: datetime, tenant_id: str = "") -> None:
        self.status = "Triaged"

    @event(Resolved)
    def _resolved(
        self, reviewed_by: str, change: str | None, link: str | None, timestamp: datetime,
        tenant_id: str = "",
    ) -> None:  # fmt: skip
        self.status = "Resolved"

    @event(WontFix)
    def _wont_fix(
        self, reviewed_by: str, reason: str | None, timestamp: datetime, tenant_id: str = ""
    ) -> None:
        self.status = "WontFix"

    @event(ReporterNotified)
    def _reporter_notified(  # the whole notice, sealed; published by reference (D139)
        self,
        tenant_id: str,
        reporter: str,
        outcome: str,
        change: str | None,
        link: str | None,
        reason: str | None,
        timestamp: datetime,
    ) -> None:
        pass

    def correct_kind(self, kind: str, addressee: str, *, corrected_by: str, at: datetime) -> None:
        """D170: a submitted wrong-answer report's Kind and Addressee, as a reviewer corrects
        them; the reporter's stay on ``Drafted``. The Kind in force again is no event."""
        self._annotatable()
        if self.facts is None:
            raise InvalidTransition(
                "only a wrong-answer report (one with a labelled block) has a Kind to correct",
                field="kind",
            )
        if (kind, addressee) == (self.kind_in_force, self.addressee_in_force):
            return
        self._kind_corrected(
            timestamp=at, tenant_id=self.tenant_id, kind=kind, addressee=addressee,
            corrected_by=corrected_by,
        )  # fmt: skip

    def tag(self, tag: str, *, tagged_by: str, at: datetime) -> None:
        """D172: a tag is added once; adding it again changes nothing."""
        self._annotatable()
        if tag not in self.tags:
            self._tagged(timestamp=at, tenant_id=self.tenant_id, tag=tag, tagged_by=tagged_by)

    def note(self, words: str, *, noted_by: str, at: datetime) -> None:
        """D173: every note is kept, in the order written."""
        self._annotatable()
        self._note_added(timestamp=at, tenant_id=self.tenant_id, words=words, noted_by=noted_by)

    def _annotatable(self) -> None:
        if self.status == "Draft":  # W27: a draft is no report yet
            raise InvalidTransition(
                "a draft is annotated once it is submitted", **{"from": "Draft"}
            )

    @event(KindCorrected)
    def _kind_corrected(
        self, tenant_id: str, kind: str, addressee: str, corrected_by: str, timestamp: datetime
    ) -> None:
        self.kind_in_force, self.addressee_in_force = kind, addressee

    @event(Tagged)
    def _tagged(self, tenant_id: str, tag: str, tagged_by: str, timestamp: datetime) -> None:
        self.tags.add(tag)

    @event(NoteAdded)
    def _note_added(self, tenant_id: str, words: str, noted_by: str, timestamp: datetime) -> None:
        pass

    def record_notice_delivery(
        self, *, at: datetime, status_code: int | None, error: str | None, final: bool
    ) -> None:
        """One webhook delivery attempt of the reporter's notice; ``final`` ends the retries.
        A notice nobody received changes nothing else: the outcome stands and ``mine``
        shows it."""
        self._notice_attempted(
            timestamp=at,
            attempt=self.notice_attempts + 1,
            status_code=status_code,
            error=error,
            final=final,
        )

    @event(ReporterNoticeDeliveryAttempted)
    def _notice_attempted(
        self,
        attempt: int,
        status_code: int | None,
        error: str | None,
        final: bool,
        timestamp: datetime,
    ) -> None:
        self.notice_attempts = attempt
        self.notice_settled = final or received(status_code)

    def record_delivery(
        self, *, at: datetime, status_code: int | None, error: str | None, final: bool
    ) -> None:
        """One webhook delivery attempt of a hand-over; ``final`` ends the retries."""
        delivered = received(status_code)
        self._delivery_attempted(
            timestamp=at, attempt=self.delivery_attempts + 1, status_code=status_code, error=error
        )
        if not delivered and final:
            self._delivery_failed(timestamp=at, attempts=self.delivery_attempts, error=error)

    @event(HandOverDeliveryAttempted)
    def _delivery_attempted(
        self, attempt: int, status_code: int | None, error: str | None, timestamp: datetime
    ) -> None:
        self.delivery_attempts = attempt
        self.delivery_settled = received(status_code)

    @event(HandOverDeliveryFailed)
    def _delivery_failed(self, attempts: int, error: str | None, timestamp: datetime) -> None:
        # A hand-over nobody received is a report nobody acts on: the Inbox shows it.
        self.status = "New"
        self.delivery_settled = True
