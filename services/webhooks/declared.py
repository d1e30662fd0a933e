"""``OutgoingWebhook``: what a context declares of the events it posts to a webhook — which
events, how each is written as a CloudEvent, when its delivery is settled, and the command
that records each attempt. The reader (``services.webhooks.reader``) does the rest."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from services.webhooks.signed import Attempt


@dataclass(frozen=True)
class OutgoingWebhook:
    # The reader's name: its place in the log, its parked events, its heartbeat; attempts
    # are recorded as the actor ``system:<name>``.
    name: str
    # The event class posted (its topic is what the reader follows).
    event: type[Any]
    # The event as the CloudEvent its topic carries, given the CloudEvents source: the body
    # and its id (the delivery's id, so a receiver de-duplicates either way).
    cloudevent: Callable[[Any, str], tuple[bytes, str]]
    # Whether the aggregate (loaded by the event's originator id) has settled the delivery
    # of this event already: a restart that meets it again skips it.
    settled: Callable[[Any, Any], bool]
    # The command that records one attempt of this event's delivery.
    attempt: Callable[[Any, Attempt], BaseModel]
    # Whether that command is issued as a service's rather than a person's.
    as_service: bool = False
