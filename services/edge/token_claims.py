"""What a bearer token of a trusted issuer must say, and what it grants (decisions D33).

``TrustedIssuer`` is one configured issuer (``FEEDBACKLOOP_OAUTH_ISSUERS``): its URL, the
audience its tokens must name, the claims that hold the tenant and the roles, and its bound:
the tenants it may speak for and the roles it may grant at most (decisions D102). A token
naming another tenant, or holding a role beyond the bound, is refused whole (401, nothing
done), never cut down to what the bound allows. A verified token's claims make the
principal: ``sub`` is the actor; the tenant is the configured claim; the scopes are the
known ones in ``scope`` (space-separated, or a list in ``scp``); the roles are the known ones
in the roles claim (contracts/roles.py), or, when the token has no roles claim at all, those
its scopes imply, as for a key that names none (decisions D26). A token
whose subject is its own client (``client_id`` or ``azp`` equal to ``sub``) is a service's,
as a client-credentials token is. ``Refusal`` is how anything short of that is said
(``services.edge.tokens``).
"""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from contracts.roles import ROLES, Role
from services.edge.auth import SCOPES, Principal
from services.permissions.rules import roles_of


class TrustedIssuer(BaseModel):
    """One configured issuer whose bearer JWTs the API accepts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    issuer: str = Field(pattern="^https?://", description="the exact `iss` of its tokens")
    audience: str = Field(min_length=1, description="the `aud` its tokens must name")
    tenant_claim: str = Field(default="tenant", min_length=1)
    roles_claim: str = Field(default="roles", min_length=1)
    # Its bound (decisions D102), named by every entry: an issuer is trusted for what it was
    # configured for, not for whatever its tokens say.
    tenants: tuple[str, ...] = Field(
        min_length=1, description="the tenants its tokens may name (another's: refused)"
    )
    roles: tuple[Role, ...] = Field(
        description="the roles its tokens may grant at most (one beyond: refused)"
    )


TRUSTED_ISSUERS = TypeAdapter(list[TrustedIssuer])


class Refusal(Exception):
    """A bearer JWT not accepted; ``reason`` is what the log says (never the token)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def principal_of(
    claims: Mapping[str, Any], trusted: TrustedIssuer, facts: dict[str, str]
) -> Principal:
    """The principal a verified token's claims describe (the mapping of the module doc)."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise Refusal("missing-sub")
    facts["sub"] = shown(subject)
    tenant = claim(claims, trusted.tenant_claim)
    if not isinstance(tenant, str) or not tenant:
        raise Refusal("missing-tenant")
    facts["tenant"] = shown(tenant)
    if tenant not in trusted.tenants:
        raise Refusal("tenant-not-allowed")  # D102: the issuer does not speak for it
    granted = set(words(claims.get("scope"))) | set(words(claims.get("scp")))
    said = claim(claims, trusted.roles_claim)
    scopes = frozenset(scope for scope in SCOPES if scope in granted)
    held = roles_of(None, scopes) if said is None else set(words(said))
    roles = frozenset(role for role in ROLES if role in held)
    beyond = roles.difference(trusted.roles)
    if beyond:
        facts["roles"] = shown(" ".join(sorted(beyond)))
        raise Refusal("role-not-allowed")  # D102: more than the issuer may grant
    client = claims.get("client_id", claims.get("azp"))
    return Principal(tenant, subject, scopes, service=client == subject, roles=roles)


def claim(claims: Mapping[str, Any], name: str) -> Any:
    """A claim by its name, dotted for a nested one (``realm_access.roles``)."""
    value: Any = claims
    for part in name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def words(value: Any) -> list[str]:
    """A space-separated string or a list of strings, as its words."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def shown(value: Any, limit: int = 200) -> str:
    """A claim as the log shows it: the caller wrote it, so it is cut short and its control
    characters escaped (no forged log lines)."""
    text = str(value)[:limit]
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
