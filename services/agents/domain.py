"""The agent register's aggregate. It lives below the contexts
(``services.permissions.agent_register``), since every context decides with the register;
this context only declares its commands and routes."""

from services.permissions.agent_register import AgentRegistration, registration_id

__all__ = ["AgentRegistration", "registration_id"]
