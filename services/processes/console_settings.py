"""The console's settings, read from the one settings class (docs/console.md)."""

from datetime import timedelta

from services.console.console import ConsoleSettings, OidcClient
from services.processes.settings import Settings


def console_settings(settings: Settings, dev_key: str | None) -> ConsoleSettings:
    oidc = None
    if settings.console_oidc_issuer and settings.console_oidc_client_id:
        oidc = OidcClient(
            settings.console_oidc_issuer,
            settings.console_oidc_client_id,
            settings.console_oidc_client_secret,
        )
    return ConsoleSettings(
        idle=timedelta(minutes=settings.console_idle_minutes),
        absolute=timedelta(hours=settings.console_session_hours),
        dev_key=dev_key,
        # Under TLS the cookie goes over HTTPS only; people reach the service at public_url.
        secure_cookie=settings.public_url.startswith("https://"),
        oidc=oidc,
        trace_links=settings.trace_links,
    )
