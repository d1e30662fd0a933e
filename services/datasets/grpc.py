"""gRPC ``Learning.GetDatasetSnapshot`` (SPEC C22): a dataset version resolved to its snapshot.

A grpcio (asyncio) server in the same process as the API, on its own port
(``FEEDBACKLOOP_GRPC_PORT``; 0 = off). It takes the API's keys, or a trusted issuer's token
(``services.edge.tokens``), as the ``authorization: Bearer <key>`` metadata and the scope
``factory.evaluation.read`` and a role that reads all of the tenant, the HTTP read's rule (a
Requester alone is PERMISSION_DENIED, as HTTP's 403; decisions D113); a refusal of a known
caller is a row of the audit (D110). A key sees its own tenant's datasets only, so another tenant's
answers NOT_FOUND exactly as one that does not exist (C16, C51). The version is read from
the dataset itself, not a read model: a version just published resolves at once, and the
same request answers the same snapshot forever (C15).

The messages are generated from ``contracts/learning.proto`` (``make grpc``); the service is
registered by a generic handler, so nothing here leans on the generated servicer. The request
arrives as bytes and is read only once the caller is known: bytes that are no request answer
UNAUTHENTICATED to a stranger and INVALID_ARGUMENT to a key, never a failure of ours with a
traceback in the log (were grpc to decode it, its failure would be logged as the service's).
The ``authorization`` entry is taken once: two are refused, as two Authorization headers are
over HTTP, rather than one of them counting by accident. An error names an id only once it is
a ``DatasetId`` (at most 200 characters): a longer one is refused without being echoed.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime

import asyncpg
import grpc
from eventsourcing.application import AggregateNotFoundError
from google.protobuf.message import DecodeError
from pydantic import BaseModel, ValidationError

from contracts.artifact_refs import SCHEME
from contracts.datasets import DatasetId
from contracts.errors import NotFound, RoleRequired
from contracts.learning_pb2 import DatasetSnapshot, GetDatasetSnapshotRequest
from contracts.scalars import DatasetVersion
from services.bus.asking import Asking, asking, refused_as
from services.bus.audit import AuditTrail
from services.datasets.domain import Dataset
from services.datasets.ids import dataset_key
from services.edge.auth import KeyRing
from services.edge.door_audit import noted
from services.edge.problems import Unauthorized
from services.edge.scopes import authorize_off_loop
from services.edge.tokens import TokenVerifier
from services.observing.metrics import UNAUTHENTICATED
from services.permissions.doors import GRPC, GRPC_METHODS
from services.permissions.rules import require
from services.store.artifacts import get_artifact
from services.store.event_store import EventStore

log = logging.getLogger(__name__)

SERVICE = "feedbackloop.learning.v1.Learning"
DOOR = GRPC.name  # as the audit names it (decisions D110)
METHOD = f"{SERVICE}/GetDatasetSnapshot"
# The rule of the HTTP read of the same version, declared with the door (decisions D113).
RULE = GRPC_METHODS[METHOD]
Context = grpc.aio.ServicerContext[bytes, DatasetSnapshot]


class RequestedSnapshot(BaseModel):
    """The request's fields held to the scalars the HTTP path holds them to (a dataset id as
    ``/factory/evaluation/datasets/{datasetId}``, a version as ``…/versions/{version}``)."""

    dataset_id: DatasetId
    version: DatasetVersion


def refused_field(request: GetDatasetSnapshotRequest) -> str | None:
    """What is wrong with the request, naming the field and never echoing its value (an id
    may be megabytes long), or None."""
    try:
        RequestedSnapshot(dataset_id=request.dataset_id, version=request.version)
    except ValidationError as error:
        first = error.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return None


class Learning:
    """The service's one method, with the store, the artifacts' pool, the keys and the
    trusted issuers' tokens."""

    def __init__(
        self,
        store: EventStore,
        pool: asyncpg.Pool,
        keys: KeyRing,
        tokens: TokenVerifier | None = None,
        audit: AuditTrail | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store, self.pool, self.keys, self.tokens = store, pool, keys, tokens
        self.audit, self.clock = audit, clock

    async def get_dataset_snapshot(self, raw: bytes, context: Context) -> DatasetSnapshot:
        with asking(DOOR, METHOD) as asked:
            tenant_id = await self.tenant_of(context, asked)
            return await self.snapshot(tenant_id, raw, context)

    async def snapshot(self, tenant_id: str, raw: bytes, context: Context) -> DatasetSnapshot:
        try:
            request = GetDatasetSnapshotRequest.FromString(raw)
        except (DecodeError, ValueError):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the request is not a GetDatasetSnapshotRequest"
            )
        if (problem := refused_field(request)) is not None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        try:
            dataset = await asyncio.to_thread(self.load, tenant_id, request.dataset_id)
        except AggregateNotFoundError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no dataset {request.dataset_id}")
        found = dataset.versions.get(request.version)
        if found is None:
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"no version {request.version} of {request.dataset_id}",
            )
        content = b""
        if request.include_content:
            try:
                _media, content = await get_artifact(self.pool, tenant_id, found.snapshot_ref)
            except NotFound:
                await context.abort(grpc.StatusCode.DATA_LOSS, "the snapshot artifact is gone")
        return DatasetSnapshot(
            dataset_id=dataset.dataset_id,
            tenant_id=tenant_id,
            version=found.version,
            snapshot_ref=found.snapshot_ref,
            sha256=found.snapshot_ref.removeprefix(SCHEME),
            task_count=found.task_count,
            classification=found.classification,
            published_at=found.published_at.isoformat(),
            content=content,
        )

    async def tenant_of(self, context: Context, asked: Asking) -> str:
        """The tenant of the key in the metadata, if it holds the scope and a role that reads
        all of the tenant: the rule of the HTTP read of the same version (decisions D23,
        D113). A refusal of a known caller is a row of the audit (D110)."""
        given = [
            value
            for name, value in context.invocation_metadata() or ()
            if name.lower() == "authorization"
        ]
        if len(given) > 1:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the authorization entry is given more than once"
            )
        header = given[0] if given else ""
        scheme, _, key = str(header).partition(" ")
        principal = None
        if scheme.lower() == "bearer":
            with contextlib.suppress(Unauthorized):
                principal = await authorize_off_loop(self.keys, key.strip(), None, self.tokens)
        if principal is None:
            UNAUTHENTICATED.labels(DOOR).inc()  # counted, not audited (decisions D111)
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "send a valid API key: authorization: Bearer"
            )
        assert principal is not None
        noted(principal)
        if RULE.scope not in principal.scopes:
            await self.refuse(context, asked, "forbidden", f"this key lacks {RULE.scope}")
        try:
            require(principal.roles, RULE.roles, "reading a dataset's snapshot")
        except RoleRequired as refused:
            await self.refuse(context, asked, refused.code, refused.message)
        return principal.tenant_id

    async def refuse(self, context: Context, asked: Asking, code: str, message: str) -> None:
        """PERMISSION_DENIED, audited as the HTTP door's 403 is."""
        refused_as(code)
        if self.audit is not None:
            self.audit.refused(asked, self.clock())
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, message)

    def load(self, tenant_id: str, dataset_id: str) -> Dataset:
        dataset: Dataset = self.store.repository.get(dataset_key(tenant_id, dataset_id))
        return dataset


def handler(learning: Learning) -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "GetDatasetSnapshot": grpc.unary_unary_rpc_method_handler(
                learning.get_dataset_snapshot,
                request_deserializer=None,  # bytes: read once the caller is known
                response_serializer=DatasetSnapshot.SerializeToString,
            )
        },
    )


async def serve_grpc(learning: Learning, host: str, port: int) -> tuple[grpc.aio.Server, int]:
    """Start the server; answers it and the port it listens on (a port of 0 in tests would
    mean off in the settings, so tests pass a free one)."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler(learning),))
    bound = server.add_insecure_port(f"{host}:{port}")
    if not bound:
        raise RuntimeError(f"grpc: cannot serve on {host}:{port}")
    await server.start()
    log.info("grpc: Learning on %s:%d", host, bound)
    return server, bound
