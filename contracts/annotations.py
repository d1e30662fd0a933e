"""A reviewer's annotations of a submitted report: a corrected Kind and Addressee, tags and
private notes (decisions D170–D174). Each is a command of its own, stamped with who wrote it;
the report keeps what its reporter wrote beside them.
"""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import Field, StringConstraints

from contracts.feedback import Contract
from contracts.reports import Kind
from contracts.scalars import NoNul, NotBlank, Tag

MAX_NOTE = 4_000
NoteText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NOTE), NoNul, NotBlank]
# Whom a report is for, by role (contracts.report_kinds.Addressee): a reviewer names a role,
# never a person, so the corrected Addressee names nobody (decisions D171, D133).
AddresseeRole = Literal[
    "agent owner", "engineering triage", "node owner", "content owner", "Inbox reviewer"
]


class CorrectKind(Contract):
    """The Kind the report really is, and whom it is for (the Kind's own Addressee when
    left out)."""

    kind: Kind
    addressee: AddresseeRole | None = Field(
        default=None, description="By role; left out, the role the Kind is addressed to."
    )


class TagReport(Contract):
    tag: Tag = Field(description="Lowercase letters and digits in words joined by hyphens.")


class NoteReport(Contract):
    note: NoteText = Field(description="A private note: read by Reviewers, never the reporter.")


class CorrectReportKind(Contract):
    report_id: UUID = Field(alias="reportId")
    correction: CorrectKind


class TagReportCommand(Contract):
    report_id: UUID = Field(alias="reportId")
    tag: Tag


class NoteReportCommand(Contract):
    report_id: UUID = Field(alias="reportId")
    note: NoteText
