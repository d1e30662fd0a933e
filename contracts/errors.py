"""The errors a command can end in, mapped to HTTP statuses and dead-letter reasons at the edge.

DomainError
├── NotFound            404  the thing named does not exist (for this tenant)
├── InvalidTransition   409  the thing exists but is not in a state that allows this
├── Conflict            409  the request contradicts one already accepted (idempotency key)
├── Refused(field)      422  the request is not acceptable as written; ``field`` names why
├── NotPermitted(field) 403  this caller may not do this, whatever it writes (a service
│   │                        confirming an eval case); ``field`` names what it would set
│   └── RoleRequired    403  the caller holds none of the roles needed (``needed`` names them)
├── NotConfigured       409  the service lacks what this needs (an agent, a model)
└── Unreadable          409  what this needs is held but does not open: a sealed box that
                             fails authentication, an incident (decisions D142, D145)
"""

from typing import Any


class DomainError(Exception):
    """Base of every error a decision can raise; ``code`` is machine-readable."""

    code = "domain-error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.details}


class NotFound(DomainError):
    code = "not-found"


class InvalidTransition(DomainError):
    code = "invalid-transition"


class Conflict(DomainError):
    code = "conflict"


class Refused(DomainError):
    code = "refused"

    def __init__(self, message: str, *, field: str, **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class NotPermitted(DomainError):
    code = "not-permitted"

    def __init__(self, message: str, *, field: str, **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class NotConfigured(DomainError):
    code = "not-configured"


class Unreadable(DomainError):
    """The data this needs is held but cannot be read: tampered with or corrupted, never
    erased (decisions D142). Not the caller's fault, and not a failure of the service either:
    an incident an operator answers (``incident`` names it, as ``/readyz`` does)."""

    code = "unreadable"


MAX_ECHOED = 200  # as long as a dataset id may be over HTTP


def echoed(text: str) -> str:
    """An id as an error names it: bounded, so a request of megabytes is not sent back."""
    return text if len(text) <= MAX_ECHOED else f"{text[:MAX_ECHOED]}… ({len(text)} characters)"


class RoleRequired(NotPermitted):
    """The caller holds none of the roles this needs (SPEC C52; the rules: decisions D22).
    ``needed``: the roles any one of which would do, so the caller knows whom to ask."""

    def __init__(self, message: str, *, needed: tuple[str, ...]) -> None:
        super().__init__(message, field="role", needed=list(needed))
        self.needed = needed
