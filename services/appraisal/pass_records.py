"""What a paid pass recorded for a run: numbers only, on the ``appraisal`` channel (SPEC M44).

One aggregate per run and pass: a pass is recorded once, so asking again for a run already
asked about or appraised costs nothing and changes nothing. The results hold no text a model
wrote: an intervention opinion's word from a closed set for an error it cites by the id we
minted (never a label's input, decisions D153), or the appraiser's one signed error (sign,
agency, visible).
"""

from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate

PASSES_NAMESPACE = UUID("5e2b8d41-0c6f-5f93-a7d8-4b19e2c60f58")


def pass_id(tenant_id: str, run_id: str, kind: str) -> UUID:
    return uuid5(PASSES_NAMESPACE, f"{tenant_id}/{run_id}/{kind}")


class PaidPass(Aggregate):
    class Recorded(Aggregate.Created):
        tenant_id: str
        run_id: str
        kind: str  # opinion (older: probe) | appraiser
        results: list[dict[str, Any]]
        model: str

    def __init__(
        self, tenant_id: str, run_id: str, kind: str, results: list[dict[str, Any]], model: str
    ) -> None:
        self.tenant_id = tenant_id
        self.run_id = run_id
        self.kind = kind
        self.results = results

    @classmethod
    def record(
        cls, *, tenant_id: str, run_id: str, kind: str, results: list[dict[str, Any]],
        model: str, at: datetime,
    ) -> "PaidPass":  # fmt: skip
        return cls._create(
            cls.Recorded,
            id=pass_id(tenant_id, run_id, kind),
            timestamp=at,
            tenant_id=tenant_id,
            run_id=run_id,
            kind=kind,
            results=results,
            model=model,
        )
