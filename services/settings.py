"""Every setting of every process, read from the environment in one place (the composition root).

Without ``DATABASE_URL`` the service runs on the embedded default: a real PostgreSQL started
from a pip wheel under ``FEEDBACKLOOP_DATA_DIR``. Without ``KAFKA_BOOTSTRAP_SERVERS`` there is
no relay and no inbound consumer, and the service says so.
"""

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


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

    api_keys: str | None = Field(default=None, description="JSON list of API key entries")
    api_keys_file: Path | None = None

    cloudevents_source: str = "urn:feedbackloop"
    # Put before every topic name, e.g. "staging." (tests use a fresh one each). Empty by
    # default, so the names are exactly the published ones.
    topic_prefix: str = ""
    topic_partitions: int = 3
    topic_replication_factor: int = 1
    inbound_group_id: str = "feedbackloop-inbound"

    # Hand-overs also go to this webhook, signed with the secret (HMAC-SHA256), if set.
    handover_webhook_url: str | None = None
    handover_webhook_secret: str | None = None
    handover_webhook_max_attempts: int = 5
    handover_webhook_backoff_seconds: float = 1.0

    # The agent under test: "http" (our agent protocol) or "openai" (Chat Completions).
    agent_kind: str | None = None
    agent_url: str | None = None
    agent_api_key: str | None = None
    agent_model: str | None = None  # the default model when a case pins none
    agent_timeout_seconds: float = 120.0
    # Per-agent pass thresholds, JSON: {"<agent path>": {"looked": 0.8, "correct": 0.6}}
    evals_thresholds: str | None = None

    bus_max_batch: int = 100
    # Readiness (/readyz, feedbackloop status): a reader is unhealthy past these.
    reader_max_lag: int = 10_000  # log positions behind the head
    reader_max_silence_seconds: float = 30.0  # since its last heartbeat
    read_wait_seconds: float = 10.0  # longest wait for a read model to reach minPosition
    log_level: str = "INFO"

    @property
    def embedded(self) -> bool:
        return self.database_url is None
