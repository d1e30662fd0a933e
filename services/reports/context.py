"""The reports context, declared once: what the runtime runs of it."""

from contracts.annotations import CorrectReportKind, NoteReportCommand, TagReportCommand
from contracts.reports import (
    ComposeWrongAnswer,
    DraftReport,
    RecordHandOverDelivery,
    RecordReporterNoticeDelivery,
    ReviewReportCommand,
    SubmitReport,
)
from projections.inbox import Inbox
from services.declaration import Command, Context
from services.permissions.rules import REQUESTER, REVIEWER, SERVICE_ONLY
from services.reports.annotating import correct_report_kind, note_report, tag_report
from services.reports.annotation_api import annotation_routes
from services.reports.api import report_routes
from services.reports.handlers import (
    compose_wrong_answer,
    draft_report,
    record_hand_over_delivery,
    record_reporter_notice_delivery,
    review_report,
    shown,
    submit_report,
)
from services.reports.published import PUBLICATIONS
from services.reports.webhook import HAND_OVER_WEBHOOK, REPORTER_WEBHOOK

REPORTS = Context(
    "reports",
    commands=(
        Command(DraftReport, draft_report, permits=REQUESTER),
        Command(ComposeWrongAnswer, compose_wrong_answer, permits=REQUESTER),
        Command(SubmitReport, submit_report, permits=REQUESTER, replays=shown),
        Command(ReviewReportCommand, review_report, permits=REVIEWER, replays=shown),
        # D170–D174: a Reviewer's annotations; a repeat under its key answers as it is now.
        Command(CorrectReportKind, correct_report_kind, permits=REVIEWER, replays=shown),
        Command(TagReportCommand, tag_report, permits=REVIEWER, replays=shown),
        Command(NoteReportCommand, note_report, permits=REVIEWER, replays=shown),
        Command(RecordHandOverDelivery, record_hand_over_delivery, permits=SERVICE_ONLY),
        Command(
            RecordReporterNoticeDelivery, record_reporter_notice_delivery, permits=SERVICE_ONLY
        ),
    ),
    routes=lambda http, given: report_routes(http, annotation_routes(http)),
    read_models=(Inbox(),),
    publications=PUBLICATIONS,
    webhooks=(HAND_OVER_WEBHOOK, REPORTER_WEBHOOK),
)
