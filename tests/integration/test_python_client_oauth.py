"""The Python client signed in by OAuth2 client credentials at a real OpenID Connect issuer
(decisions D204; the service trusts it as in tests/e2e/test_oauth_service.py): the token is
fetched on first use, fetched again before it expires, and again at once after the service
refused it (401)."""

import time
from collections.abc import Iterator

import pytest
from feedbackloop_client import Client, ClientCredentials, Unauthorized

from tests.conftest import Keys, settings_for
from tests.integration.served_api import ServedApi, served_api
from tests.oidc_tokens import SCOPES, oidc_issuer, started_issuer, with_issuer

RATING = {"project_id": "p", "subject_kind": "run", "subject_ref": "run-1", "kind": "rating"}


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    yield from started_issuer(tmp_path_factory)


@pytest.fixture
def api(database_url: str, keys: Keys, issuer: oidc_issuer.Issuer) -> Iterator[ServedApi]:
    settings = with_issuer(settings_for(database_url, keys), issuer, 30.0)
    with served_api(settings, ["feedback_list", "access"]) as started:
        yield started


def test_a_service_records_as_itself_and_its_token_is_refreshed(
    api: ServedApi, issuer: oidc_issuer.Issuer
) -> None:
    token_url = issuer.discovery()["token_endpoint"]
    # The issuer's tokens live 300 s: a margin of 299 s makes each one stale after a second.
    credentials = ClientCredentials(token_url, "svc-a", "secret-a", scope=SCOPES, margin=299)
    with Client(api.url, credentials=credentials, read_your_writes=True) as client:
        written = client.record_feedback(**RATING, rating=5)
        assert credentials.fetched == 1
        assert [item.given_by for item in client.iter_feedback()] == ["svc-a"]  # sub: the actor
        time.sleep(1.2)
        client.record_feedback(**RATING, rating=4)
        assert credentials.fetched >= 2  # fetched again before it expired

        credentials.margin = 0  # fresh for 300 s from now on ...
        client.record_feedback(**RATING, rating=3)
        fetched = credentials.fetched
        credentials._token = "forged"  # ... yet the service refuses it: fetched again, once
        again = client.record_feedback(**RATING, rating=5, idempotency_key="k-1")
        assert credentials.fetched == fetched + 1
        assert again.feedback_id != written.feedback_id

    wrong = ClientCredentials(token_url, "svc-a", "not-the-secret")
    with Client(api.url, credentials=wrong) as stranger, pytest.raises(Unauthorized) as refused:
        stranger.record_feedback(**RATING, rating=5)
    assert refused.value.code == "token-refused"
