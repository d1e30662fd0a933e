"""Every door of the service, declared once: the rule it asks and how its decisions reach the
audit (SPEC C52; decisions D110, D114). tests/unit/test_doors.py lists the doors the service
really has (the CLI's commands from its typer app, the gRPC methods from their descriptor,
the Kafka subscriptions and the scheduled orders from the contexts' declarations) and
tests/integration/test_doors.py the HTTP app's routes and the console's pages; a door added
without its line here fails them. The route × role tables (tests/integration/test_role_*.py)
then hold every HTTP route to its rule, and to one audit row per refusal.

The one rule engine is ``services.permissions.rules``; the one audit ``services.bus.audit``.
A command, whichever door it came in by, is checked by its declared ``permits`` where the bus
decides it and is a row of the audit there; a door that refuses before any command exists
(a scope, a read's role, a route's own check, a Kafka sender's role) writes that refusal's
one row itself (``AuditTrail.refused``), so that every decision is one row, naming its door.
"""

from dataclasses import dataclass

from services.permissions.rules import READ_ALL


@dataclass(frozen=True)
class Door:
    """A way in. ``name``: as the audit's ``door`` column says it."""

    name: str
    rule: str  # where the role rule is asked
    audited: str  # how its decisions become rows


COMMANDS_AT_THE_BUS = "each command's `permits`, where the bus decides it (D22)"
BUS_ROWS = "the bus's row of every command it decided"

HTTP = Door(
    "http",
    rule="the route's scope and role dependency (services.edge.scopes: reads by READ_ALL "
    "unless the route names its readers), a route's own `require`, then " + COMMANDS_AT_THE_BUS,
    audited=BUS_ROWS + "; services.edge.door_audit's row of a refusal decided at the route",
)
CONSOLE = Door(
    "console",
    rule="each page's readers (services.console.pages: the API's read rule for the same data); "
    "its writes issue the API's commands: " + COMMANDS_AT_THE_BUS,
    audited=BUS_ROWS + "; services.edge.door_audit's row of a page refused (403)",
)
GRPC = Door(
    "grpc",
    rule="the read rule of the HTTP read of the same data (GRPC_METHODS)",
    audited="services.datasets.grpc writes its PERMISSION_DENIED as a row",
)
KAFKA = Door(
    "kafka",
    rule="the roles configured for the message's source, narrowed by its `role` "
    "(services.permissions.sources, D27), then " + COMMANDS_AT_THE_BUS,
    audited=BUS_ROWS + "; services.kafka.inbound.refusals' row of a sender refused while read",
)
CLI = Door(
    "cli",
    rule="the machine's operator holds the database's credentials: a command decides as a "
    "named role (CLI_COMMANDS), then " + COMMANDS_AT_THE_BUS,
    audited=BUS_ROWS,
)
SCHEDULED = Door(
    "scheduled",
    rule="the service's own work: its commands carry no roles and are not checked (D22)",
    audited=BUS_ROWS,
)
DOORS = (HTTP, CONSOLE, GRPC, KAFKA, CLI, SCHEDULED)


@dataclass(frozen=True)
class ReadRule:
    """A read's rule: the scope a key must hold and the roles, any one of which reads."""

    scope: str
    roles: tuple[str, ...]


# gRPC methods by their full name, each with the rule of the HTTP read of the same data
# (GET /factory/evaluation/datasets/{datasetId}/versions/{version}: decisions D23, D113).
GRPC_METHODS: dict[str, ReadRule] = {
    "feedbackloop.learning.v1.Learning/GetDatasetSnapshot": ReadRule(
        "factory.evaluation.read", READ_ALL
    ),
}

# What each CLI command is, as a door. A command that decides does so through the bus, as a
# named role or as the service itself; the others decide nothing a tenant's audit holds.
PROCESS = "runs the service: its doors are the HTTP, gRPC, Kafka and scheduled ones"
AS_ADMIN = "decides as the operator, a PlatformAdmin of the tenant (D28)"
AS_SERVICE = "the service's own work, started by hand: commands with no roles (D22)"
READS = "reads with the database's credentials; decides nothing"
OPERATES = "operates the machinery, no command of a tenant: logged, not audited (D94)"
LOCAL = "reads files or documents only"
EXPORTS = "reads with the database's credentials as the operator; one audit row per export (D212)"
CLI_COMMANDS: dict[str, str] = {
    "serve": PROCESS, "api": PROCESS, "projector": PROCESS, "relay": PROCESS,
    "handover": PROCESS, "inbound": PROCESS, "scheduler": PROCESS, "demo": PROCESS,
    "keys new": AS_ADMIN, "keys revoke": AS_ADMIN, "roles grant": AS_ADMIN,
    "roles revoke": AS_ADMIN, "agents register": AS_ADMIN, "charter write": AS_ADMIN,
    "erase": AS_ADMIN, "sessions end": AS_ADMIN,
    "appraise": AS_SERVICE,
    # The CI gate: the comparison is the service's, each case runs as its confirmer (D181).
    "gate": AS_SERVICE,
    "keys list": READS, "roles list": READS, "audit export": READS, "agents show": READS,
    "agents list": READS, "agents mine": READS, "intake show": READS, "parked list": READS,
    "parked show": READS, "queues progress": READS,
    "status": READS, "health": READS, "charter show": READS, "export": READS,
    "restore check": READS,
    "exports feedback": EXPORTS, "exports reports": EXPORTS, "exports runs": EXPORTS,
    "parked retry": OPERATES, "parked skip": OPERATES, "rebuild": OPERATES,
    "backup": OPERATES, "restore prepare": OPERATES, "restore acknowledge": OPERATES,
    "rewrap": OPERATES,
    "contracts": LOCAL, "charter check": LOCAL, "tokens check": LOCAL, "tokens issuers": LOCAL,
}  # fmt: skip

# The scheduler's orders (services.scheduling.orders), each the service's own work.
SCHEDULED_ORDERS = frozenset(
    {"PlanNight", "BuildDigest", "RaiseProposals", "AppraiseClosures", "ExpireOldText"}
)
