"""Every setting of every process, read from the environment in one place (the composition root).

Without ``DATABASE_URL`` the service runs on the embedded default: a real PostgreSQL started
from a pip wheel under ``FEEDBACKLOOP_DATA_DIR``. Without ``KAFKA_BOOTSTRAP_SERVERS`` there is
no relay and no inbound consumer, and the service says so.

Structured settings (the API keys, the per-agent thresholds, the agent) are typed here and
parsed by pydantic-settings from the same JSON values as always, so a bad value stops the
process at start with a validation error that names the setting and the field.
"""

import base64
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from contracts.roles import Role
from contracts.trace_links import TraceUrlTemplate
from contracts.widget import Origin
from services.edge.auth import API_KEY_ENTRIES, ApiKeyEntry
from services.edge.token_claims import TRUSTED_ISSUERS, TrustedIssuer
from services.edge.tokens import TokenVerifier
from services.kafka.shares import Share
from services.permissions.sources import DEFAULT_SOURCE_ROLES
from services.store.master_keys import MasterKeys

Rate = Annotated[float, Field(ge=0.0, le=1.0)]
# One agent's pass rates by the check they bound (SPEC W66); a name that is not one is refused,
# not ignored. The rates left out keep the evals context's defaults.
AgentRates = dict[Literal["looked", "correct"], Rate]


class AgentSettings(BaseModel):
    """The agent under test: ``http`` (our agent protocol) or ``openai`` (Chat Completions).
    No URL: no agent, and eval runs say so."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["http", "openai"] = "http"
    url: str | None = None
    api_key: str | None = None
    model: str | None = None  # the default model when a case pins none
    timeout_seconds: float = 120.0


class TrackerSettings(BaseModel):
    """One tenant's issue tracker for the triage intake of the weekly digest: GitHub's REST
    API at ``url`` (GitHub Enterprise: ``https://<host>/api/v3``), as the holder of ``token``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = "https://api.github.com"
    token: SecretStr  # shown as '**********' in any repr or log


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FEEDBACKLOOP_", extra="ignore", populate_by_name=True
    )

    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "FEEDBACKLOOP_DATABASE_URL")
    )
    kafka_bootstrap_servers: str | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "KAFKA_BOOTSTRAP_SERVERS", "FEEDBACKLOOP_KAFKA_BOOTSTRAP_SERVERS"
        ),
    )
    data_dir: Path = Path("var")
    host: str = "127.0.0.1"
    port: int = 8000
    # Prometheus metrics on a port of their own, apart from the API; 0 turns them off. Unset,
    # each process role takes a port of its own (services/processes/roles.py: serve 9464,
    # projector 9465, relay 9466, inbound 9467, scheduler 9468, handover 9469, api 9470 and
    # up, a port per worker), so one stack's processes share a host. Tenant ids appear as
    # label values only if asked for.
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = Field(default=None, ge=0, le=65535)
    metrics_tenant_labels: bool = False

    # FEEDBACKLOOP_GRPC_PORT: gRPC Learning.GetDatasetSnapshot (SPEC C22), served by `serve`
    # and `api` beside the HTTP API, with the same keys. 0 (the default) is off.
    grpc_host: str = "127.0.0.1"
    grpc_port: int = Field(default=0, ge=0, le=65535)

    # FEEDBACKLOOP_API_KEYS: a JSON list of entries, as `feedbackloop keys new` prints them.
    api_keys: list[ApiKeyEntry] = Field(default_factory=list)
    api_keys_file: Path | None = None
    # FEEDBACKLOOP_RELOADABLE_SETTINGS_FILE: NAME=value lines of the settings read at each use
    # (learning, memory promotion), read again once the file changes: an operator's change
    # while running (services/processes/reloadable.py, decisions D152). None: environment only.
    reloadable_settings_file: Path | None = None
    # The roles each Kafka ``source`` acts in (decisions D27); ``*``: any source not named.
    kafka_source_roles: dict[str, list[Role]] = Field(
        default_factory=lambda: dict(DEFAULT_SOURCE_ROLES)  # type: ignore[arg-type]
    )

    # FEEDBACKLOOP_OAUTH_ISSUERS: the OAuth2 issuers whose bearer JWTs the API accepts beside
    # the keys, a JSON list: [{"issuer": "https://idp.example.org/realms/x", "audience":
    # "feedbackloop", "tenant_claim": "tenant", "roles_claim": "roles", "tenants": ["acme"],
    # "roles": ["Requester", "Reviewer"]}]. Each names the tenants it may speak for and the
    # roles it may grant at most (decisions D102). Empty: keys only.
    oauth_issuers: list[TrustedIssuer] = Field(default_factory=list)
    # Their discovery documents and JWKS are fetched with this timeout, the JWKS kept this
    # long, and refetched for an unknown kid at most once per cool-down (decisions D32).
    oauth_timeout_seconds: float = Field(default=5.0, gt=0)
    oauth_jwks_lifespan_seconds: float = Field(default=300.0, gt=0)
    oauth_jwks_cooldown_seconds: float = Field(default=30.0, ge=0)
    # Clock skew allowed on exp and nbf.
    oauth_leeway_seconds: float = Field(default=30.0, ge=0)

    cloudevents_source: str = "urn:feedbackloop"
    # Where people reach this API (e.g. https://feedback.example.org): links that leave the
    # service, such as a digest post's url, are absolute under it; empty: relative paths.
    public_url: str = ""
    # The pages that may embed the feedback widget, per tenant, JSON {"<tenant>":
    # ["https://shop.example"]}: a widget token is minted only for one of its tenant's origins,
    # and the widget's routes answer CORS to these alone (decisions D234). Empty: no widget.
    widget_origins: dict[str, list[Origin]] = Field(default_factory=dict)
    # Put before every topic name, e.g. "staging." (tests use a fresh one each). Empty by
    # default, so the names are exactly the published ones.
    topic_prefix: str = ""
    # Six: one, two, three or six inbound consumers each take an equal share; with a count
    # that does not divide the partitions, one consumer carries more and sets the pace.
    topic_partitions: int = 6
    topic_replication_factor: int = 1
    inbound_group_id: str = "feedbackloop-inbound"
    # FEEDBACKLOOP_RELAY_SHARE: the share I/N of the aggregates this process's relay publishes
    # (`feedbackloop relay --share` says the same); 1/1, the default, is the whole log as ever
    # (docs/kafka.md, decisions D270-D274). A share that is no I/N stops the start.
    relay_share: str = "1/1"

    # FEEDBACKLOOP_MASTER_KEYS: the master keys that wrap the data keys personal data is
    # sealed under (docs/privacy.md), a JSON list of base64 AES keys, the current one first;
    # older ones stay listed until `feedbackloop privacy rewrap` has run. Empty: the
    # development key, which protects nothing.
    master_keys: list[str] = Field(default_factory=list)
    # Per tenant, months after which report and comment text is erased (decisions D45),
    # JSON: {"<tenant>": 12}. A tenant not named keeps text until its people are erased.
    text_retention_months: dict[str, int] = Field(default_factory=dict)

    # Hand-overs also go to this webhook, signed with the secret (HMAC-SHA256), if set.
    handover_webhook_url: str | None = None
    handover_webhook_secret: str | None = None
    handover_webhook_max_attempts: int = 5
    handover_webhook_backoff_seconds: float = 1.0
    # Agents' webhooks (decisions D195): attempts of one notice, the first pause and the
    # longest one between them.
    agent_webhook_max_attempts: int = 8
    agent_webhook_backoff_seconds: float = 1.0
    agent_webhook_max_backoff_seconds: float = 3600.0

    # The agent under test, FEEDBACKLOOP_AGENT_KIND / _URL / _API_KEY / _MODEL /
    # _TIMEOUT_SECONDS; read together as `agent`.
    agent_kind: Literal["http", "openai"] = "http"
    agent_url: str | None = None
    agent_api_key: str | None = None
    agent_model: str | None = None
    agent_timeout_seconds: float = Field(default=120.0, gt=0)
    # Per-agent pass thresholds, JSON: {"<agent path>": {"looked": 0.8, "correct": 0.6}}
    evals_thresholds: dict[str, AgentRates] = Field(default_factory=dict)

    # How often the scheduler looks at the clock (SPEC W79, W105: hourly); ticks fall on
    # multiples of it, and a downtime's missed due times are caught up at the next one.
    scheduler_tick_seconds: float = Field(default=3600.0, gt=0)

    # The weekly digest: its read of reports is bounded, newest first (SPEC W112),
    # and it waits this long for the read models it reads to reach the store's head.
    digest_page_bound: int = Field(default=200, ge=1)
    digest_wait_seconds: float = Field(default=60.0, gt=0)

    # The console (docs/console.md): a session ends after this long unused, and after this
    # long in any case; with an issuer and a client id, people sign in there (authorization
    # code with PKCE) besides with a personal key.
    console_idle_minutes: float = Field(default=30.0, gt=0)
    console_session_hours: float = Field(default=12.0, gt=0)
    console_oidc_issuer: str | None = None
    console_oidc_client_id: str | None = None
    console_oidc_client_secret: str | None = None
    # The triage intake of the weekly digest (docs/digests.md): each tenant's tracker, JSON
    # {"<tenant>": {"url": "https://api.github.com", "token": "…"}}; a tenant without one has
    # its items recorded as unrouted. The intake retries a tracker that is down with pauses
    # growing from the first to the longest.
    trackers: dict[str, TrackerSettings] = Field(default_factory=dict)
    # FEEDBACKLOOP_TRACE_LINKS: each tenant's tracing UI, JSON {"<tenant>":
    # "https://jaeger.example/trace/{traceId}"}; the console links a report's and an eval
    # conversation's trace there (docs/tracing.md, decisions D265). A tenant without one gets
    # the ids shown, not linked.
    trace_links: dict[str, TraceUrlTemplate] = Field(default_factory=dict)
    tracker_backoff_seconds: float = Field(default=1.0, gt=0)
    tracker_max_backoff_seconds: float = Field(default=300.0, gt=0)

    bus_max_batch: int = 100
    # Readiness (/readyz, feedbackloop status): a reader is unhealthy past these.
    reader_max_lag: int = 10_000  # log positions behind the head
    reader_max_silence_seconds: float = 30.0  # since its last heartbeat
    read_wait_seconds: float = 10.0  # longest wait for a read model to reach minPosition
    log_level: str = "INFO"

    @field_validator("api_keys", mode="before")
    @classmethod
    def _entries_given_as_json(cls, value: object) -> object:
        # The environment's JSON is decoded by pydantic-settings; this takes the same JSON
        # text when the settings are built in code (tests, tools).
        return API_KEY_ENTRIES.validate_json(value) if isinstance(value, str) else value

    @field_validator("relay_share")
    @classmethod
    def _a_share(cls, value: str) -> str:
        return str(Share.parse(value))  # "2 / 3" → "2/3"; no I/N: refused, naming the form

    @field_validator("oauth_issuers", mode="before")
    @classmethod
    def _issuers_given_as_json(cls, value: object) -> object:
        return TRUSTED_ISSUERS.validate_json(value) if isinstance(value, str) else value

    @field_validator("agent_kind", mode="before")
    @classmethod
    def _kind_in_any_case(cls, value: object) -> object:
        return (value.strip().lower() or "http") if isinstance(value, str) else value

    @property
    def embedded(self) -> bool:
        return self.database_url is None

    def token_verifier(self) -> TokenVerifier:
        """The verifier of the configured issuers' bearer JWTs (false when none is)."""
        return TokenVerifier(
            self.oauth_issuers,
            timeout_seconds=self.oauth_timeout_seconds,
            jwks_lifespan_seconds=self.oauth_jwks_lifespan_seconds,
            jwks_cooldown_seconds=self.oauth_jwks_cooldown_seconds,
            leeway_seconds=self.oauth_leeway_seconds,
        )

    @property
    def master_key_ring(self) -> MasterKeys:
        """The master keys, decoded; the development key when none is set."""
        if not self.master_keys:
            return MasterKeys()
        return MasterKeys(tuple(base64.b64decode(key, validate=True) for key in self.master_keys))

    @property
    def agent(self) -> AgentSettings:
        return AgentSettings(
            kind=self.agent_kind,
            url=self.agent_url or None,
            api_key=self.agent_api_key,
            model=self.agent_model,
            timeout_seconds=self.agent_timeout_seconds,
        )
