"""Every error the client raises, one class per kind of answer, each carrying the service's
error body (``{"error", "message", "field", "problems", ...}``, services/edge/problems.py):
``.field`` names what is wrong, ``.problems`` every field found wrong (decisions D205)."""

from typing import Any

import httpx
import pydantic


class FeedbackLoopError(Exception):
    """Anything the client raises; ``.field`` is the field, parameter or header at fault."""

    field: str | None = None


class ApiError(FeedbackLoopError):
    """The service answered an error: its status, code and body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        self.code = str(body.get("error", "unknown"))
        self.field = body.get("field")
        self.problems: list[dict[str, str]] = list(body.get("problems") or [])
        message = str(body.get("message", ""))
        super().__init__(
            f"{status} {self.code}: {message}" + (f" ({self.field})" if self.field else "")
        )
        self.message = message


class ValidationFailed(ApiError):
    """422: the body, a parameter or a header is refused; ``.field`` names it (dotted for
    nested ones, e.g. ``items.3.rating``). Raised before sending, with ``status`` 0, when the
    generated model already refuses a value."""


class Unauthorized(ApiError):
    """401: no valid API key or token."""


class Forbidden(ApiError):
    """403: the key lacks a scope (``.scope``) or its holder a role (``not-permitted``)."""

    @property
    def scope(self) -> str | None:
        scope = self.body.get("scope")
        return None if scope is None else str(scope)


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: an Idempotency-Key used for another body, a move the state does not allow, ..."""


class TooLarge(ApiError):
    """413."""


class UnsupportedMediaType(ApiError):
    """415."""


class RateLimited(ApiError):
    """429, after the retries."""


class NotYetVisible(ApiError):
    """503 ``not-yet-visible``: the read model had not applied ``min_position`` in time,
    after the retries."""


class Unavailable(ApiError):
    """503 for another reason (not ready), after the retries."""


class ServerError(ApiError):
    """500 or another 5xx."""


class ConnectionFailed(FeedbackLoopError):
    """The service could not be reached, after the retries."""


BY_STATUS: dict[int, type[ApiError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    415: UnsupportedMediaType,
    422: ValidationFailed,
    429: RateLimited,
}


def error_of(response: httpx.Response) -> ApiError:
    """The typed exception of an error answer."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {"error": "unknown", "message": response.text[:500]}
    status = response.status_code
    if status == 503:
        kind: type[ApiError] = (
            NotYetVisible if body.get("error") == "not-yet-visible" else Unavailable
        )
    elif status >= 500:
        kind = ServerError
    else:
        kind = BY_STATUS.get(status, ApiError)
    return kind(status, body)


def refused_before_sending(error: pydantic.ValidationError) -> ValidationFailed:
    """A value the generated model refuses, as the service would: the field by the API's
    name (``subjectKind``, not ``subject_kind``), dotted, and every problem."""
    problems = [
        {"field": ".".join(str(part) for part in problem["loc"]), "message": problem["msg"]}
        for problem in error.errors(include_url=False)
    ]
    first = problems[0] if problems else {"field": "", "message": str(error)}
    body = {
        "error": "invalid",
        "message": first["message"],
        "field": first["field"],
        "problems": problems,
    }
    return ValidationFailed(0, body)
