"""The access context, declared once: keys and role grants as events of the tenant, their
read model, and the routes of keys, roles and the audit (decisions D28–D30)."""

from contracts.access import GrantRole, IssueApiKey, RevokeApiKey, RevokeRole
from projections.access import Access
from services.access.api import access_routes
from services.access.handlers import (
    grant_role,
    holder_created_by,
    issue_api_key,
    key_created_by,
    revoke_api_key,
    revoke_role,
)
from services.declaration import Command, Context
from services.permissions.rules import ADMIN

ACCESS = Context(
    "access",
    commands=(
        Command(IssueApiKey, issue_api_key, permits=ADMIN, creates=key_created_by),
        Command(RevokeApiKey, revoke_api_key, permits=ADMIN),
        Command(GrantRole, grant_role, permits=ADMIN, creates=holder_created_by),
        Command(RevokeRole, revoke_role, permits=ADMIN),
    ),
    routes=lambda http, given: access_routes(http),
    read_models=(Access(),),
)
