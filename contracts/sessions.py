"""Console sessions ended on the server side (decisions D122): signing out ends the one
session, and a PlatformAdmin ends every session of a person of the tenant. A session lives in
its sealed cookie until then; its end is an event of the tenant, which every process's next
request of that session meets (``projections.ended_sessions``)."""

from typing import Annotated

from pydantic import Field, StringConstraints

from contracts.feedback import Contract
from contracts.scalars import Name

# ``secrets.token_urlsafe(16)``: what the console puts in a session's sealed cookie.
SessionId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{16,64}$")]


class EndConsoleSession(Contract):
    """Sign out: the caller's own session ``sessionId`` opens nothing from now on."""

    session_id: SessionId = Field(alias="sessionId")


class EndConsoleSessions(Contract):
    """End every console session of ``subject`` begun until now (PlatformAdmin)."""

    subject: Name
