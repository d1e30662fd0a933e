"""Console sessions ended on the server, as decisions (decisions D122): a session ends once,
for its own person; an admin's end of all of a person's sessions is recorded each time; and
which paths are the console's, whose answers carry its headers and error pages (D120, D121)."""

from datetime import UTC, datetime

import pytest

from services.access.sessions import (
    ConsoleSession,
    PersonsSessions,
    persons_sessions_id_for,
    session_id_for,
)
from services.console.headers import is_console_path

AT = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def test_a_session_is_recorded_once_it_ends_under_its_person_and_tenant() -> None:
    ended = ConsoleSession.end(tenant_id="t", subject="rita", session_id="s" * 22, by="rita", at=AT)
    [event] = ended.collect_events()
    assert isinstance(event, ConsoleSession.Ended)
    assert (event.tenant_id, event.subject, event.session_id) == ("t", "rita", "s" * 22)
    assert ended.id == session_id_for("t", "rita", "s" * 22)
    # The same session id of another person or tenant is another session.
    assert ended.id != session_id_for("t", "rob", "s" * 22)
    assert ended.id != session_id_for("u", "rita", "s" * 22)


def test_every_end_of_all_of_a_persons_sessions_is_recorded_at_its_time() -> None:
    person = PersonsSessions.name(tenant_id="t", subject="rita", at=AT)
    person.end_all(by="ada", at=AT)
    person.end_all(by="ada", at=AT.replace(hour=10))
    events = person.collect_events()
    ends = [e for e in events if isinstance(e, PersonsSessions.AllEnded)]
    assert [(e.by, e.timestamp.hour) for e in ends] == [("ada", 9), ("ada", 10)]
    assert person.id == persons_sessions_id_for("t", "rita")


@pytest.mark.parametrize(
    ("path", "console"),
    [
        ("/", True),
        ("/inbox/not-a-uuid", True),
        ("/console/static/htmx.min.js", True),
        ("/factoryish", True),
        ("/factory", False),
        ("/factory/reports/inbox", False),
        ("/docs", False),
        ("/openapi.json", False),
    ],
)
def test_the_consoles_paths_are_all_but_the_apis(path: str, console: bool) -> None:
    assert is_console_path(path) is console
