"""Consent to share a dataset across tenants, asked of MemoryPromotionService (SPEC C17, C53).

The port is ``ConsentService``: one question (may this tenant's dataset version go, anonymised,
to that tenant?) answered ``Consent`` (granted, or refused with the service's reason), or
``ConsentUnavailable`` when the service cannot answer. ``MemoryPromotionConsent`` asks it over
HTTP (decisions D56):

    POST {url}/v1/consent-checks
    {"tenantId", "datasetId", "version", "toTenant", "scope": "dataset-share", "anonymised": true}
    → 200 {"granted": true} | 200 {"granted": false, "reason": "..."}

Anything else (no connection, a timeout, another status, a body that does not say) is the
service unavailable: C53 lets it degrade, and for a share degrading means refusing (503, with
the reason) and sharing nothing; a consent is never assumed.

Where it is configured (decisions D56): ``FEEDBACKLOOP_MEMORY_PROMOTION_URL`` for the instance,
``FEEDBACKLOOP_MEMORY_PROMOTION_URLS`` (a JSON object, tenant → URL) for a tenant of its own;
read afresh at each share, so a change to the reloadable settings file needs no restart
(decisions D152). A tenant with a service decides by it alone: its locally recorded consents
are not read. Only a tenant without one shares on a
consent recorded locally (``POST …/consents``).
"""

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx

URL = "FEEDBACKLOOP_MEMORY_PROMOTION_URL"
URLS = "FEEDBACKLOOP_MEMORY_PROMOTION_URLS"
TIMEOUT = "FEEDBACKLOOP_MEMORY_PROMOTION_TIMEOUT_SECONDS"
DEFAULT_TIMEOUT_SECONDS = 5.0
SCOPE = "dataset-share"


@dataclass(frozen=True)
class Consent:
    granted: bool
    reason: str | None = None


class ConsentUnavailable(Exception):
    """The consent service did not answer the question; the text says why."""


class ConsentService(Protocol):
    async def check(
        self, *, tenant_id: str, dataset_id: str, version: int, to_tenant: str
    ) -> Consent:
        """Granted or refused; raises ``ConsentUnavailable`` when it cannot say."""


@dataclass(frozen=True)
class MemoryPromotionConsent:
    """MemoryPromotionService's consent and scope check, over HTTP."""

    url: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS

    async def check(
        self, *, tenant_id: str, dataset_id: str, version: int, to_tenant: str
    ) -> Consent:
        question = {
            "tenantId": tenant_id,
            "datasetId": dataset_id,
            "version": version,
            "toTenant": to_tenant,
            "scope": SCOPE,
            "anonymised": True,
        }
        try:
            async with httpx.AsyncClient(timeout=self.timeout_seconds) as http:
                answer = await http.post(self.url.rstrip("/") + "/v1/consent-checks", json=question)
        except httpx.HTTPError as error:
            raise ConsentUnavailable(f"{type(error).__name__}: {error}") from error
        if answer.status_code != 200:
            raise ConsentUnavailable(f"the consent service answered {answer.status_code}")
        try:
            body = answer.json()
        except ValueError as error:
            raise ConsentUnavailable("the consent service's answer is not JSON") from error
        granted = body.get("granted") if isinstance(body, dict) else None
        if not isinstance(granted, bool):
            raise ConsentUnavailable("the consent service's answer says neither yes nor no")
        reason = body.get("reason")
        return Consent(granted, reason if isinstance(reason, str) and reason else None)


def consent_service_for(environ: Mapping[str, str], tenant_id: str) -> ConsentService | None:
    """The tenant's consent service as configured now; None: consent is recorded locally.
    A per-tenant table that does not parse makes every share unavailable, naming why: a typo
    must not open sharing on local consents where a service was meant."""
    timeout = DEFAULT_TIMEOUT_SECONDS
    with contextlib.suppress(ValueError):
        timeout = float(environ.get(TIMEOUT) or DEFAULT_TIMEOUT_SECONDS)
    raw = (environ.get(URLS) or "").strip()
    if raw:
        try:
            table = json.loads(raw)
        except ValueError:
            return Misconfigured(f"{URLS} is not a JSON object")
        if not isinstance(table, dict):
            return Misconfigured(f"{URLS} is not a JSON object")
        url = table.get(tenant_id)
        if isinstance(url, str) and url.strip():
            return MemoryPromotionConsent(url.strip(), timeout)
    url = (environ.get(URL) or "").strip()
    return MemoryPromotionConsent(url, timeout) if url else None


@dataclass(frozen=True)
class Misconfigured:
    """A consent service meant but not readable from the configuration: unavailable."""

    why: str

    async def check(
        self, *, tenant_id: str, dataset_id: str, version: int, to_tenant: str
    ) -> Consent:
        raise ConsentUnavailable(self.why)
