"""The role rules (SPEC C52, C05; written out as decisions D22–D27): one engine, asked where
commands are decided, so the HTTP routes, the Kafka door and any later door obey one rule.

Two kinds of rule:

- role-only ("a Reviewer may review"): each command declares ``permits``, the roles any one of
  which may issue it; ``permitted`` wraps the command's handler with that check, so the bus
  refuses before the handler loads or decides anything, and nothing is appended;
- rules that need state ("never their own report", "a maintainer of *this* agent"): the
  handler asks ``not_own`` or ``services.permissions.agent_register.require_maintainer`` once
  it has loaded what it decides on, still before it decides.

A command issued by the service's own work (the scheduler, a log reader, the nightly runner)
carries no roles at all (``Issued.roles`` is None) and is not checked: nobody asked for it,
the service's configuration did. Every door stamps the caller's roles, possibly none.

These are roles of a person or service in a tenant; ``services.processes.roles`` is about
something else (which kind of process runs: api, relay, …).
"""

from collections.abc import Iterable

from contracts.errors import RoleRequired
from contracts.roles import ROLES, Role
from services.bus.decisions import Decision, Handler
from services.bus.issued import Issued
from services.store.event_store import EventStore

# Who may issue each command, by the rules of decisions D23 (each command's ``permits``).
# SPEC C05: feedback comes from a requester, a reviewer or an operator.
FEEDBACK_GIVERS: tuple[Role, ...] = ("Requester", "Reviewer", "Operator")
REQUESTER: tuple[Role, ...] = ("Requester",)  # files reports
REVIEWER: tuple[Role, ...] = ("Reviewer",)  # triages, resolves, won't-fixes (not their own)
LIFTERS: tuple[Role, ...] = ("Reviewer", "AssetMaintainer")  # make a report an eval case
MAINTAINER: tuple[Role, ...] = ("AssetMaintainer",)  # of the agent in the register
OPERATOR: tuple[Role, ...] = ("Operator",)  # orders, neighbours' facts, datasets, snapshots
ADMIN: tuple[Role, ...] = ("PlatformAdmin",)  # keys, roles, the register, the charter
# An agent's webhook: its maintainers in the register, or a PlatformAdmin (decisions D190).
OWNERS: tuple[Role, ...] = ("AssetMaintainer", "PlatformAdmin")

# Review queues (decisions D161): a Reviewer or a PlatformAdmin defines and removes a queue;
# only a Reviewer claims; a holder releases their claim, a PlatformAdmin anyone's.
QUEUE_KEEPERS: tuple[Role, ...] = ("Reviewer", "PlatformAdmin")
RELEASERS: tuple[Role, ...] = ("Reviewer", "PlatformAdmin")

# A change of an agent (decisions D241): the registry's service roles for any agent; an
# AssetMaintainer for the agents the register names them maintainer of (the handler asks).
AGENT_CHANGERS: tuple[Role, ...] = ("Operator", "PlatformAdmin", "AssetMaintainer")
# An artifact is stored to be referenced by a write: a comment's text or a corrected artifact
# (feedback), a dataset task's input and expected outcome (an Operator's). Only those who
# write what references it upload one (decisions D101); an Observer writes nothing.
ARTIFACT_WRITERS: tuple[Role, ...] = FEEDBACK_GIVERS
# Read-side (decisions D23): every role of the tenant reads the register and its own reports;
# every role but a Requester's reads all of the tenant (a Requester reads only what is theirs).
READERS: tuple[Role, ...] = ROLES
READ_ALL: tuple[Role, ...] = tuple(role for role in ROLES if role != "Requester")
# Commands no door offers: the service issues them to itself (a webhook's delivery record,
# a night's steps); a door that did send one would be refused for want of a role.
SERVICE_ONLY: tuple[Role, ...] = ()

# Keys configured before roles existed name only scopes: the roles each scope implies
# (decisions D26). A read scope makes an Observer; the write scopes the roles whose commands
# the scope's routes issued before.
ROLES_OF_SCOPE: dict[str, tuple[Role, ...]] = {
    "factory.feedback.write": ("Requester", "Reviewer"),
    "factory.feedback.read": ("Observer",),
    "factory.evaluation.read": ("Observer",),
    "factory.evaluation.run": ("AssetMaintainer", "Operator"),
    "factory.assets.write": ("AssetMaintainer", "PlatformAdmin"),
}


def roles_of(roles: Iterable[str] | None, scopes: Iterable[str]) -> frozenset[str]:
    """The roles a configured key holds: those it names (an empty list: none), or, when its
    entry has no ``roles`` at all (written before roles existed), those its scopes imply
    (D26)."""
    if roles is not None:
        return frozenset(roles)
    return frozenset(role for scope in scopes for role in ROLES_OF_SCOPE.get(scope, ()))


def holds(roles: frozenset[str] | None, permits: tuple[str, ...]) -> bool:
    """Whether a caller holding ``roles`` may do what any one of ``permits`` may (None: the
    service's own work, always)."""
    return roles is None or not roles.isdisjoint(permits)


def require(issued_roles: frozenset[str] | None, permits: tuple[str, ...], what: str) -> None:
    """Raise ``RoleRequired`` naming the roles that would do, unless the caller holds one."""
    if holds(issued_roles, permits):
        return
    if not permits:
        raise RoleRequired(f"{what} is issued by the service itself, not by a caller", needed=())
    raise RoleRequired(f"{what} needs the role {' or '.join(permits)}", needed=permits)


def permitted(permits: tuple[str, ...], handler: Handler, what: str) -> Handler:
    """``handler`` behind the role-only rule of its command (D22): refused before it runs."""

    def checked(store: EventStore, issued: Issued) -> Decision:
        if issued.roles is not None and issued.roles.isdisjoint(permits):
            require(issued.roles, permits, what)
        return handler(store, issued)

    return checked


def giver_role(roles: frozenset[str] | None) -> str | None:
    """SPEC C05, decisions D23: the role feedback is given in, as recorded: the first of
    requester, reviewer, operator the giver holds (a Kafka message naming its ``role`` holds
    that one only). None for the service's own feedback."""
    if roles is None:
        return None
    for role in FEEDBACK_GIVERS:
        if role in roles:
            return role.lower()
    return None


def reads_all(roles: frozenset[str] | None) -> bool:
    """Whether a reader sees all of the tenant, not only their own (decisions D23)."""
    return holds(roles, READ_ALL)


def reads_report(roles: frozenset[str] | None, reader: str, reporter: str) -> bool:
    """Decisions D23, D100: a report is read by its reporter or by a reader of all of the
    tenant; to anyone else it is absent (a 404, as an id that names no report), wherever it
    is shown."""
    return reporter == reader or reads_all(roles)


def not_own(issued: Issued, author: str, what: str) -> None:
    """SPEC C52 / D24: a Reviewer never decides on their own report, whatever else they hold.
    Only a caller's command is checked; the service's own work has no author of its own."""
    if issued.roles is not None and issued.actor == author:
        raise RoleRequired(
            f"{what}: a report is reviewed by a Reviewer other than its reporter",
            needed=("Reviewer",),
        )


NOTE_READERS: tuple[Role, ...] = REVIEWER


def reads_notes(roles: frozenset[str] | None, reader: str, reporter: str) -> bool:
    """Decisions D173: a report's private notes are read by Reviewers, never by the
    report's reporter, whatever roles they hold (they are the reviewers' words about it)."""
    return reporter != reader and holds(roles, NOTE_READERS)
