"""The learning context, declared once: what the runtime runs of it."""

from contracts.learning import (
    DecideProposalCommand,
    DraftReleaseOpened,
    PickUpProposal,
    RaiseProposal,
    RecordReleaseCommand,
)
from contracts.neighbours import DriftDetected, EvaluationCompleted, SkillCandidateProposed
from projections.learning_proposals import LearningProposals
from services.declaration import Command, Context, Given, Order
from services.learning.api import learning_routes
from services.learning.generator import ProposalGenerator
from services.learning.handlers import (
    decide,
    evidence_created,
    pick_up,
    proposal_created,
    raise_proposal,
    record_evidence,
    record_release,
)
from services.learning.published import PUBLICATIONS
from services.learning.settings import LearningSettings
from services.learning.subscriptions import SUBSCRIPTIONS
from services.permissions.rules import MAINTAINER, OPERATOR
from services.scheduling.orders import RaiseProposals


def proposal_generator(given: Given) -> ProposalGenerator:
    """What the scheduler hands ``RaiseProposals(date, now)`` (SPEC C42); its settings are
    read afresh at each run (C46, C47: reloadable)."""
    return ProposalGenerator(
        given.store,
        given.bus,
        given.pool,
        settings=lambda: LearningSettings.from_environ(given.environ),
        wait_seconds=given.scheduled_wait_seconds,
    )


LEARNING = Context(
    "learning",
    commands=(
        # A neighbour's evidence (SPEC C39–C41): RaiseFromEvaluation, RaiseFromDrift,
        # RaiseSkillProposal.
        Command(EvaluationCompleted, record_evidence, permits=OPERATOR, creates=evidence_created),
        Command(DriftDetected, record_evidence, permits=OPERATOR, creates=evidence_created),
        Command(
            SkillCandidateProposed, record_evidence, permits=OPERATOR, creates=evidence_created
        ),
        Command(RaiseProposal, raise_proposal, permits=OPERATOR, creates=proposal_created),
        Command(PickUpProposal, pick_up, permits=MAINTAINER),
        Command(DecideProposalCommand, decide, permits=MAINTAINER),
        Command(RecordReleaseCommand, record_release, permits=MAINTAINER),
        Command(DraftReleaseOpened, record_release, permits=MAINTAINER),
    ),
    routes=lambda http, given: learning_routes(http),
    read_models=(LearningProposals(),),  # the evidence clusters run on its reader
    publications=PUBLICATIONS,
    subscriptions=SUBSCRIPTIONS,
    orders=(Order(RaiseProposals, proposal_generator),),
)
