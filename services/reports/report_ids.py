"""A report's id, derived from its tenant and the command that drafted it.

The same command drafts the same report: a repeated command (the same Idempotency-Key) finds
the report it drafted, never a second one.
"""

from uuid import UUID, uuid5

REPORT_NAMESPACE = UUID("0c9e6f2a-6d41-5c7b-a1d3-9b8e7f605a42")


def report_id_for(tenant_id: str, command_key: str) -> UUID:
    return uuid5(REPORT_NAMESPACE, f"{tenant_id}/{command_key}")
