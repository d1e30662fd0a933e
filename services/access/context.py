"""The access context, declared once: keys and role grants as events of the tenant, their
read model, and the routes of keys, roles and the audit (decisions D28–D30)."""

from contracts.access import GrantRole, IssueApiKey, RevokeApiKey, RevokeRole
from contracts.sessions import EndConsoleSession, EndConsoleSessions
from projections.access import Access
from services.access.api import access_routes
from services.access.handlers import (
    end_console_session,
    end_console_sessions,
    grant_role,
    holder_created_by,
    issue_api_key,
    key_created_by,
    revoke_api_key,
    revoke_role,
    session_created_by,
    sessions_created_by,
)
from services.declaration import Command, Context
from services.permissions.rules import ADMIN, READERS

ACCESS = Context(
    "access",
    commands=(
        Command(IssueApiKey, issue_api_key, permits=ADMIN, creates=key_created_by),
        Command(RevokeApiKey, revoke_api_key, permits=ADMIN),
        Command(GrantRole, grant_role, permits=ADMIN, creates=holder_created_by),
        Command(RevokeRole, revoke_role, permits=ADMIN),
        # Decisions D122: everyone signed in ends their own session (a session is held by
        # someone holding a role: signing in asks for one); a PlatformAdmin ends a person's.
        Command(
            EndConsoleSession, end_console_session, permits=READERS, creates=session_created_by
        ),
        Command(
            EndConsoleSessions, end_console_sessions, permits=ADMIN, creates=sessions_created_by
        ),
    ),
    routes=lambda http, given: access_routes(http),
    read_models=(Access(),),
)
