"""Command handlers of a reviewer's annotations (decisions D170–D174): load, decide, hand back.

A Reviewer annotates another person's report, never their own (SPEC C52, decisions D24, as a
review): its Kind and Addressee corrected, a tag, a private note.
"""

from contracts.annotations import CorrectReportKind, NoteReportCommand, TagReportCommand
from contracts.report_kinds import Kind
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.permissions.rules import not_own
from services.reports.handlers import load_for, state
from services.store.event_store import EventStore


def correct_report_kind(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, CorrectReportKind)
    report = load_for(store, issued, command.report_id)
    not_own(issued, report.reporter, "correcting this report's kind")
    kind = Kind(command.correction.kind)
    # D171: left out, the Addressee is the role the corrected Kind is addressed to.
    addressee = command.correction.addressee or kind.addressee.value
    report.correct_kind(kind.value, addressee, corrected_by=issued.actor, at=issued.at)
    return Decision([report], state(report))


def tag_report(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, TagReportCommand)
    report = load_for(store, issued, command.report_id)
    not_own(issued, report.reporter, "tagging this report")
    report.tag(command.tag, tagged_by=issued.actor, at=issued.at)
    return Decision([report], state(report))


def note_report(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, NoteReportCommand)
    report = load_for(store, issued, command.report_id)
    not_own(issued, report.reporter, "noting on this report")
    report.note(command.note, noted_by=issued.actor, at=issued.at)
    return Decision([report], state(report))
