"""One partition's slice of a poll read into commands, and the messages refused on reading."""

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts.errors import DomainError, Refused
from services.bus.issued import Issued
from services.kafka.inbound.parsing import parse
from services.kafka.inbound.subscription import Subscription
from services.permissions.sources import EVERY_ROLE_SOURCES, SourceRoles

log = logging.getLogger(__name__)

READ_STRIDE = 50  # records read between two turns of the event loop

Refusal = tuple[Any, DomainError]  # a record, and why it is refused


@dataclass  # not frozen: one a message, and a frozen one costs several times as much to build
class Command:
    record: Any
    subscription: Subscription
    issued: Issued


async def read_slice(
    records: list[Any],
    by_topic: Mapping[str, Mapping[str, Subscription]],
    clock: Callable[[], datetime],
    sources: SourceRoles = EVERY_ROLE_SOURCES,
) -> tuple[list[Command], list[Refusal]]:
    """The commands of one partition's slice of a poll, and its refused messages.

    It lets the poll being applied go on every ``READ_STRIDE`` records: reading a poll takes a
    while, in which that poll's queries would otherwise wait for their answers to be read, and
    the command bus for its next batch."""
    refused: list[Refusal] = []
    commands: list[Command] = []
    for count, record in enumerate(records, 1):
        if count % READ_STRIDE == 0:
            await asyncio.sleep(0)
        try:
            subscription, issued = parse(record, by_topic[record.topic], clock, sources)
            commands.append(Command(record, subscription, issued))
        except DomainError as error:
            refused.append((record, error))
        except Exception as error:  # reading is pure: this message's failure alone
            log.exception(
                "inbound: %s:%s@%s could not be read", record.topic, record.partition, record.offset
            )
            reason = f"the message could not be read ({type(error).__name__})"
            refused.append((record, Refused(reason, field="value")))
    return commands, refused
