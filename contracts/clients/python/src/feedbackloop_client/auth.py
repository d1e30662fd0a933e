"""How the client signs in: an API key (``Authorization: Bearer <key>``, as
services/edge/auth.py reads it) or an OAuth2 client-credentials grant whose access token is
fetched on first use and fetched again before it expires (decisions D204)."""

import asyncio
import threading
import time
from dataclasses import dataclass, field

import httpx

from feedbackloop_client.errors import Unauthorized, error_of


@dataclass(frozen=True)
class ApiKey:
    key: str

    def header(self) -> str:
        return f"Bearer {self.key}"


@dataclass
class ClientCredentials:
    """A service's identity at an OAuth2 issuer. ``token_url`` is the issuer's token endpoint
    (its discovery document's ``token_endpoint``); the token is fetched again ``margin``
    seconds before its ``expires_in`` runs out, and at once after the service answers 401."""

    token_url: str
    client_id: str
    client_secret: str
    scope: str | None = None
    margin: float = 30.0
    _token: str | None = field(default=None, repr=False)
    _expires: float = field(default=0.0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _alock: asyncio.Lock | None = field(default=None, repr=False)
    fetched: int = 0  # how many tokens were fetched: refreshes are visible to a caller

    def _form(self) -> dict[str, str]:
        form = {"grant_type": "client_credentials"}
        return form if self.scope is None else {**form, "scope": self.scope}

    def _fresh(self) -> bool:
        return self._token is not None and time.monotonic() < self._expires - self.margin

    def _keep(self, response: httpx.Response) -> str:
        if response.status_code != 200:
            error = error_of(response)
            raise Unauthorized(401, {**error.body, "error": "token-refused", "field": None})
        answer = response.json()
        self._token = str(answer["access_token"])
        self._expires = time.monotonic() + float(answer.get("expires_in", 300))
        self.fetched += 1
        return self._token

    def forget(self) -> None:
        """The service refused the token (401): the next request fetches a new one."""
        self._token, self._expires = None, 0.0

    def header(self, http: httpx.Client) -> str:
        with self._lock:
            if not self._fresh():
                auth = (self.client_id, self.client_secret)
                self._keep(http.post(self.token_url, data=self._form(), auth=auth))
            return f"Bearer {self._token}"

    async def aheader(self, http: httpx.AsyncClient) -> str:
        if self._alock is None:
            self._alock = asyncio.Lock()
        async with self._alock:
            if not self._fresh():
                auth = (self.client_id, self.client_secret)
                self._keep(await http.post(self.token_url, data=self._form(), auth=auth))
            return f"Bearer {self._token}"


Auth = ApiKey | ClientCredentials
