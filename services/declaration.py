"""The one value a bounded context declares itself with, and what the runtime derives from it.

Each context exports one ``Context`` (in ``services/<context>/context.py``, so that importing
its domain stays cheap) and the composition root loops over the list of them: the command
bus's registry, the HTTP routes, the read models it runs, the relay's publications, the
inbound consumer's subscriptions, the topics created at start, the scheduler's work and the
webhooks' readers all
come from these declarations. Adding a command or a read model is a change inside one
context's folder.

A context names what it needs from the running service through ``Given``, which the root
fills; it never reads settings or opens connections of its own.
"""

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg
from fastapi import APIRouter
from pydantic import BaseModel

from projections.read_model import Projection
from services.bus.command_bus import CommandBus
from services.bus.decisions import Creates, Handler, Replay
from services.edge.auth import KeyRing
from services.edge.http import Http
from services.kafka.inbound.subscription import Subscription
from services.kafka.publication import Publication
from services.permissions.rules import permitted
from services.store.event_store import EventStore
from services.webhooks.declared import OutgoingWebhook


@dataclass(frozen=True)
class Command:
    """One command and its handler. ``creates``: the id of the aggregate it creates if new
    (the bus looks up a batch's ids at once). ``replays``: what a repeat of it answers (the
    same Idempotency-Key and request). ``alone``: its handler reads nothing from the store
    when that aggregate is new, so a batch of only such is decided on the event loop.
    ``permits``: the roles any one of which may issue it (SPEC C52, decisions D22); the bus
    refuses anyone else before the handler runs. Empty: only the service issues it."""

    type: type[BaseModel]
    handler: Handler
    permits: tuple[str, ...]
    creates: Creates | None = None
    replays: Replay | None = None
    alone: bool = False


class ContextSettings(Protocol):
    """The root's settings, as far as a context's builders read them."""

    @property
    def cloudevents_source(self) -> str: ...

    @property
    def public_url(self) -> str: ...

    @property
    def digest_page_bound(self) -> int: ...

    @property
    def read_wait_seconds(self) -> float: ...

    @property
    def text_retention_months(self) -> dict[str, int]: ...

    @property
    def widget_origins(self) -> dict[str, list[str]]: ...


@dataclass(frozen=True)
class Given:
    """What the composition root gives a context to build its routes and scheduled work.

    ``settings``: the root's settings (the root reads the environment; a context only reads
    the values handed to it). ``environ``: where the settings read at each use (learning,
    memory promotion) are read from: the environment with the operator's reloadable settings
    file over it, read again once it changes (decisions D152); the night's are read from it
    when the scheduler starts. ``case_runner``: the evals context's runner of one case
    against the agent, which the nightly runner runs cases with too (its type is the evals
    context's, which this layer below the contexts cannot name). ``digest_routes``: where a
    tenant's digest posts go, as this instance is configured (decisions D150)."""

    store: EventStore
    bus: CommandBus
    pool: asyncpg.Pool
    keys: KeyRing
    settings: ContextSettings
    environ: Mapping[str, str]
    case_runner: Any
    digest_routes: Callable[[str], tuple[str, ...]] = lambda tenant_id: ()
    # Every read model rebuilt and swapped in (an erasure: live read models then hold what a
    # rebuild from the log gives, decisions D43).
    rebuild: Callable[[], Awaitable[Any]] | None = None

    @property
    def scheduled_wait_seconds(self) -> float:
        """How long scheduled work waits for a read model to reach its own commands."""
        return max(self.settings.read_wait_seconds, 60.0)


@dataclass(frozen=True)
class Order:
    """Scheduled work a context carries out: the kind of order the scheduler hands it
    (``services.scheduling.orders``) and how the one that carries it out is built."""

    kind: type
    build: Callable[[Given], Any]


Routes = Callable[[Http, Given], APIRouter]


@dataclass(frozen=True)
class Context:
    """Everything the runtime needs of one bounded context."""

    name: str
    commands: tuple[Command, ...] = ()
    routes: Routes | None = None
    read_models: tuple[Projection, ...] = ()
    publications: tuple[Publication, ...] = ()
    subscriptions: tuple[Subscription, ...] = ()
    orders: tuple[Order, ...] = ()
    # Events it posts to the configured webhook, each delivered by a reader of the log.
    webhooks: tuple[OutgoingWebhook, ...] = ()


@dataclass(frozen=True)
class Registry:
    """The command bus's registry, merged from the contexts' commands."""

    handlers: dict[type[BaseModel], Handler]
    creates: dict[type[BaseModel], Creates]
    replays: dict[type[BaseModel], Replay]
    alone: frozenset[type[BaseModel]]
    permits: dict[type[BaseModel], tuple[str, ...]]


def registry(contexts: Iterable[Context]) -> Registry:
    """One registry for the bus; a command declared by two contexts is refused. Each
    handler is registered behind its command's role rule (``permitted``)."""
    handlers: dict[type[BaseModel], Handler] = {}
    permits: dict[type[BaseModel], tuple[str, ...]] = {}
    creates: dict[type[BaseModel], Creates] = {}
    replays: dict[type[BaseModel], Replay] = {}
    alone: set[type[BaseModel]] = set()
    for context in contexts:
        for command in context.commands:
            if command.type in handlers:
                raise ValueError(f"{command.type.__name__} is declared twice ({context.name})")
            handlers[command.type] = permitted(
                command.permits, command.handler, command.type.__name__
            )
            permits[command.type] = command.permits
            if command.creates is not None:
                creates[command.type] = command.creates
            if command.replays is not None:
                replays[command.type] = command.replays
            if command.alone:
                alone.add(command.type)
    return Registry(handlers, creates, replays, frozenset(alone), permits)
