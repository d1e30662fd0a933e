"""Every door the service has is declared with its rule and its audit (SPEC C52; decisions
D110, D114): the doors are listed from what the service really serves — the CLI's commands
from its typer app, the gRPC methods from their descriptor, the Kafka subscriptions and the
scheduled orders from the contexts' declarations — and each must be in
``services.permissions.doors``. A door added later without its declaration fails here, as a
route added without its row fails the role tables. The HTTP routes and the console's pages:
tests/integration/test_doors.py."""

from collections.abc import Iterator
from typing import Any

import typer.main

from contracts import learning_pb2
from contracts.roles import ROLES
from services.datasets import grpc as grpc_door
from services.declaration import registry
from services.edge.door_audit import door_of
from services.kafka.inbound import refusals
from services.permissions import doors
from services.permissions.rules import READ_ALL
from services.processes import lifetime
from services.processes.cli import app
from services.processes.contexts import CONTEXTS, SUBSCRIPTIONS
from services.scheduling import scheduler


def cli_commands(command: Any, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield " ".join(prefix)
        return
    for name, sub in subcommands.items():
        yield from cli_commands(sub, (*prefix, name))


def test_every_cli_command_is_declared_as_a_door() -> None:
    found = set(cli_commands(typer.main.get_command(app)))
    assert "roles grant" in found
    assert found == set(doors.CLI_COMMANDS)


def test_every_grpc_method_of_the_descriptor_is_declared_with_the_read_rule_of_http() -> None:
    found = {
        f"{service.full_name}/{method.name}"
        for service in learning_pb2.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    }
    assert found == set(doors.GRPC_METHODS)
    assert grpc_door.METHOD in found
    # D113: the snapshot's read is the HTTP read's (datasets read by READ_ALL, D23).
    assert doors.GRPC_METHODS[grpc_door.METHOD].roles == READ_ALL
    assert "Requester" not in READ_ALL


def test_every_kafka_subscription_issues_a_command_the_rule_engine_checks() -> None:
    """A message on Kafka is a command of the bus's registry, with its ``permits``: the
    bus checks and audits it as it does an HTTP request's."""
    permits = registry(CONTEXTS).permits
    for subscription in SUBSCRIPTIONS:
        assert subscription.model in permits, subscription.topic
        assert set(permits[subscription.model]) <= set(ROLES), subscription.topic


def test_every_scheduled_order_is_declared() -> None:
    found = {order.kind.__name__ for context in CONTEXTS for order in context.orders}
    assert found == doors.SCHEDULED_ORDERS


def test_every_door_that_writes_to_the_audit_names_itself_as_declared() -> None:
    """The door names the code stamps on its rows are the declared ones."""
    stamped = {
        grpc_door.DOOR,
        refusals.DOOR,
        lifetime.CLI,
        scheduler.DOOR,
        *(door_of(path) for path in ("/factory/feedback", "/inbox")),
    }
    assert stamped == {door.name for door in doors.DOORS}
