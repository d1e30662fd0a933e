"""The agent register context, declared once: the commands and routes of the tenant's
agent→maintainers register (its aggregate sits below the contexts, in
``services.permissions.agent_register``, since every context decides with it)."""

from contracts.agent_register import RegisterAgentCommand
from services.agents.api import agent_routes
from services.agents.handlers import register_agent, registered_now
from services.declaration import Command, Context
from services.permissions.rules import ADMIN

AGENTS = Context(
    "agents",
    commands=(
        Command(RegisterAgentCommand, register_agent, permits=ADMIN, replays=registered_now),
    ),
    routes=lambda http, given: agent_routes(http, given.store),
)
