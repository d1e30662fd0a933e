"""The running service (``feedbackloop serve``) configured by its environment with a real
OpenID Connect issuer (``FEEDBACKLOOP_OAUTH_ISSUERS``), called over HTTP by a service that
signed in by client credentials (SPEC C52; decisions D32–D34)."""

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import Keys
from tests.e2e.conftest import Service, auth
from tests.oidc_tokens import ATTACKS, AUDIENCE, CLIENTS, FEEDBACK, SCOPES, oidc_issuer, trusted


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    started = oidc_issuer.start_issuer(
        tmp_path_factory.mktemp("e2e-issuer"), audience=AUDIENCE, clients=CLIENTS
    )
    yield started
    started.stop()


@pytest.fixture
def service_env(issuer: oidc_issuer.Issuer) -> dict[str, str]:
    return {"FEEDBACKLOOP_OAUTH_ISSUERS": json.dumps([trusted(issuer)])}


async def test_a_service_signed_in_by_client_credentials_records_as_itself(
    service: Service, http: httpx.AsyncClient, issuer: oidc_issuer.Issuer, keys: Keys
) -> None:
    token = issuer.token("svc-a", "secret-a", SCOPES)
    created = await http.post("/factory/feedback", json=FEEDBACK, headers=auth(token))
    assert created.status_code == 201, created.text
    mine = await http.get(
        "/factory/feedback",
        params={"minPosition": created.json()["position"]},
        headers=auth(token),
    )
    assert [item["givenBy"] for item in mine.json()["items"]] == ["svc-a"]  # sub is the actor
    # The API keys work beside the tokens, each in its own tenant.
    assert (await http.get("/factory/feedback", headers=auth(keys.a))).json()["items"] == []

    forged = ATTACKS["wrong-audience"](issuer)
    refused = await http.post("/factory/feedback", json=FEEDBACK, headers=auth(forged))
    assert refused.status_code == 401
    logged = service.log.read_text()
    assert "bearer token refused: reason=wrong-audience" in logged
    assert forged.rsplit(".", 1)[1] not in logged
    assert token.rsplit(".", 1)[1] not in logged
