"""Who is in the demo and what they work on: the tenant, its people with their roles, the
three agents with their maintainers, and the clock every step is stamped with.

The clock starts at a fixed Monday so that the same command on a fresh store writes the same
data (decisions D68): two weeks of work, then the night, the proposals and the digest that
follow them."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

TENANT = "dev"  # the development key's tenant: what `make run` shows
ORIGIN = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # a Monday; the demo's first day
DAYS = 14
NIGHT_DATE = ORIGIN.date() + timedelta(days=DAYS)  # the Monday after the two weeks
DIGEST_WEEK = "2026-W48"  # the second of the two weeks (Nov 23–29)


@dataclass(frozen=True)
class Person:
    subject: str
    name: str
    roles: tuple[str, ...]


REPORTERS = (
    Person("mara.keller", "Mara Keller, project lead", ("Requester",)),
    Person("jonas.weber", "Jonas Weber, accountant", ("Requester",)),
    Person("lea.fischer", "Lea Fischer, new hire", ("Requester",)),
)
REVIEWER = Person("sofia.brunner", "Sofia Brunner, Inbox reviewer", ("Reviewer", "Requester"))
MAINTAINERS = (
    Person("tim.huber", "Tim Huber, maintains the Office Coach", ("AssetMaintainer", "Requester")),
    Person("nina.rossi", "Nina Rossi, maintains the Billing agent", ("AssetMaintainer",)),
    Person("ali.demir", "Ali Demir, maintains the Onboarding guide", ("AssetMaintainer",)),
)
OPERATOR = Person("olivia.meier", "Olivia Meier, operations", ("Operator", "PlatformAdmin"))
PEOPLE = (*REPORTERS, REVIEWER, *MAINTAINERS, OPERATOR)


@dataclass(frozen=True)
class Agent:
    path: str
    maintainer: Person
    repository: str
    node: str  # the node its answers should rest on


AGENTS = (
    Agent("AgenticOffice/Agent/OfficeCoach", MAINTAINERS[0], "agentic-office/office-coach",
          "handbook/AgenticOffice/Firmenprofil"),
    Agent("AgenticOffice/Agent/Billing", MAINTAINERS[1], "agentic-office/billing",
          "handbook/Finance/Rates-2026"),
    Agent("AgenticOffice/Agent/Onboarding", MAINTAINERS[2], "agentic-office/onboarding",
          "handbook/People/First-Week"),
)  # fmt: skip


class Clock:
    """The demo's clock: set by each step, read by every route the step calls."""

    def __init__(self) -> None:
        self.at = ORIGIN

    def __call__(self) -> datetime:
        return self.at

    def day(self, day: int, minutes: int = 0) -> datetime:
        """Day ``day`` of the two weeks (0 = the first Monday), ``minutes`` after 08:00."""
        self.at = ORIGIN + timedelta(days=day, minutes=minutes)
        return self.at
