"""The role rules as pure rules (SPEC C52, C05; decisions D22–D27): the table of every
declared command × every role, keys without roles, the roles of a Kafka source, the giver's
role. The same rules over real PostgreSQL and HTTP: tests/integration/test_role_rules.py."""

from datetime import UTC, datetime
from typing import Any

import pytest

from contracts.errors import RoleRequired
from contracts.feedback import RecordFeedback
from contracts.roles import ROLES
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.declaration import registry
from services.edge.auth import SCOPES, KeyRing, new_key
from services.kafka.inbound.parsing import parse
from services.permissions.rules import giver_role, roles_of
from services.permissions.sources import SourceRoles
from services.processes.contexts import CONTEXTS, SUBSCRIPTIONS
from tests.unit.test_inbound_parsing import Record, envelope

AT = datetime(2026, 12, 1, tzinfo=UTC)
R, V, M, OP, A = "Requester", "Reviewer", "AssetMaintainer", "Operator", "PlatformAdmin"
GIVERS = {R, V, OP}
SERVICE_ONLY: set[str] = set()

# Decisions D23, command by command: who may issue it. A command declared without a row here
# fails ``test_the_table_names_every_command``.
MAY: dict[str, set[str]] = {
    "RecordFeedback": GIVERS,
    "DraftReport": {R},
    "ComposeWrongAnswer": {R},
    "SubmitReport": {R},
    "ReviewReportCommand": {V},
    # D174: a Reviewer's annotations (never on their own report: the handler's not_own)
    "CorrectReportKind": {V},
    "TagReportCommand": {V},
    "NoteReportCommand": {V},
    "RecordHandOverDelivery": SERVICE_ONLY,
    "RecordReporterNoticeDelivery": SERVICE_ONLY,
    "LiftEvalCase": {V, M},
    "PatchEvalCaseCommand": {M},
    "ConfirmEvalCaseCommand": {M},
    "RecordEvalRun": {M},
    "OpenComparison": {M},  # decisions D181
    "RecordComparedCase": {M},
    "BuildWeeklyDigest": {OP},
    "PostWeeklyDigest": {OP},
    "RecordDigestDelivery": SERVICE_ONLY,
    "RecordTriage": SERVICE_ONLY,
    "PlanTenantNight": {OP},
    "RecordNightConversation": {OP},
    "FinishNightCase": {OP},
    "FinishNight": {OP},
    "AgentChanged": {OP, A, M},  # D241: a maintainer of that agent only (the handler asks)
    "RunCompleted": {OP},
    "ArtifactValidated": {OP},
    "AddTask": {OP},
    "RemoveTask": {OP},
    "PublishVersion": {OP},
    "GrantShareConsent": {OP},
    "ShareCopy": {OP},
    "EvaluationCompleted": {OP},
    "DriftDetected": {OP},
    "SkillCandidateProposed": {OP},
    "RaiseProposal": {OP},
    "PickUpProposal": {M},
    "DecideProposalCommand": {M},
    "RecordReleaseCommand": {M},
    "DraftReleaseOpened": {M},
    "WriteCharter": {A},
    "RegisterAgentCommand": {A},
    "SubscribeAgentWebhook": {M, A},  # D190
    "WithdrawAgentWebhook": {M, A},
    # Review queues (decisions D161).
    "DefineQueueCommand": {V, A},
    "RemoveQueue": {V, A},
    "ClaimReport": {V},
    "ClaimNext": {V},
    "ReleaseClaim": {V, A},
    "RecordOwnerOutcome": GIVERS,
    "OwnerOutcomeRecorded": GIVERS,
    "TaskClosed": {OP},
    "AppraiseClosure": {OP},
    "RecordPassResults": {OP},
    "IssueApiKey": {A},
    "RevokeApiKey": {A},
    "GrantRole": {A},
    "RevokeRole": {A},
    "EndConsoleSession": set(ROLES),  # decisions D122: everyone signs out of their own
    "EndConsoleSessions": {A},
    "ErasePerson": {A},
    "ExpireText": SERVICE_ONLY,
}
REGISTRY = registry(CONTEXTS)
BY_NAME = {command.__name__: command for command in REGISTRY.handlers}


def test_the_table_names_every_command() -> None:
    assert set(MAY) == set(BY_NAME)


@pytest.mark.parametrize("name", sorted(MAY))
@pytest.mark.parametrize("role", ROLES)
def test_every_command_is_permitted_to_its_roles_and_refused_before_its_handler(
    name: str, role: str
) -> None:
    """D22: a role not permitted is refused by the registry's handler before the command's
    own handler runs (here: with no store at all), naming the roles that would do."""
    command = BY_NAME[name]
    assert set(REGISTRY.permits[command]) == MAY[name]
    issued = Issued(command.model_construct(), "t1", "someone", "c-1", AT, roles=frozenset({role}))
    if role in MAY[name]:
        return
    with pytest.raises(RoleRequired) as refused:
        REGISTRY.handlers[command](None, issued)  # type: ignore[arg-type]
    assert refused.value.code == "not-permitted"
    assert set(refused.value.needed) == MAY[name]


def test_the_service_s_own_work_is_not_asked_for_a_role() -> None:
    """D22: no roles at all (None) is the scheduler's, a reader's: the handler runs."""
    ran: list[Issued] = []
    from services.permissions.rules import permitted

    def handler(_store: Any, issued: Issued) -> Decision:
        ran.append(issued)
        return Decision([], None)

    checked = permitted((OP,), handler, "PlanTenantNight")
    checked(None, Issued(RecordFeedback.model_construct(), "t1", "system", "c", AT))  # type: ignore[arg-type]
    with pytest.raises(RoleRequired):
        checked(
            None, Issued(RecordFeedback.model_construct(), "t1", "x", "c", AT, roles=frozenset())
        )  # type: ignore[arg-type]
    assert len(ran) == 1


def test_a_key_naming_no_roles_holds_those_its_scopes_imply() -> None:
    """D26."""
    assert roles_of(None, ["factory.feedback.write"]) == {R, V}
    assert roles_of(None, ["factory.feedback.read", "factory.evaluation.read"]) == {"Observer"}
    assert roles_of(None, ["factory.evaluation.run"]) == {M, OP}
    assert roles_of(None, ["factory.assets.write"]) == {M, A}
    assert roles_of(None, SCOPES) == set(ROLES)  # an old every-scope key: every role
    assert roles_of(["Observer"], SCOPES) == {"Observer"}  # named roles are all it holds
    assert roles_of((), SCOPES) == set()  # an empty list names none: the store grants them


def test_the_key_ring_gives_a_principal_its_roles() -> None:
    plain, plain_entry = new_key("t1", "alice", ["factory.feedback.write"])
    named, named_entry = new_key("t1", "olga", list(SCOPES), roles=["Observer"])
    ring = KeyRing([_entry(plain_entry), _entry(named_entry)])
    assert ring.identify(plain) is not None
    assert ring.identify(plain).roles == {R, V}  # type: ignore[union-attr]
    assert ring.identify(named).roles == {"Observer"}  # type: ignore[union-attr]


def _entry(data: dict[str, Any]) -> Any:
    from services.edge.auth import ApiKeyEntry

    return ApiKeyEntry.model_validate(data)


def test_feedback_records_the_first_giver_role_its_giver_holds() -> None:
    """SPEC C05, D23."""
    assert giver_role(frozenset({R})) == "requester"
    assert giver_role(frozenset({V, "Observer"})) == "reviewer"
    assert giver_role(frozenset({OP})) == "operator"
    assert giver_role(frozenset({R, OP})) == "requester"
    assert giver_role(None) is None


SOURCES = SourceRoles({"urn:reviews": [V, "Observer"], "*": [R]})


def parsed(**overrides: Any) -> Issued:
    by_type = {s.cloudevent_type: s for s in SUBSCRIPTIONS}
    _, issued = parse(Record(envelope(**overrides)), by_type, lambda: AT, SOURCES)
    return issued


def test_a_kafka_command_acts_in_the_roles_of_its_source() -> None:
    """D27: the source's configured roles; ``*`` for a source not named."""
    assert parsed(source="urn:reviews").roles == {V, "Observer"}
    assert parsed(source="urn:elsewhere").roles == {R}


def test_a_role_attribute_narrows_to_that_role_and_never_widens() -> None:
    assert parsed(source="urn:reviews", role="Observer").roles == {"Observer"}
    with pytest.raises(RoleRequired) as refused:
        parsed(source="urn:reviews", role=OP)
    assert refused.value.needed == (OP,)


def test_a_role_attribute_that_is_no_role_is_refused_naming_it() -> None:
    from contracts.errors import Refused

    with pytest.raises(Refused) as refused:
        parsed(source="urn:reviews", role="Boss")
    assert refused.value.field == "role"
