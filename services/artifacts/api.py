"""HTTP routes of the artifact store (SPEC C06): store a body, fetch it by its reference."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from contracts.answers import ArtifactStored
from contracts.errors import Refused
from services.edge.auth import Principal
from services.edge.bodies import media_type
from services.edge.http import Http
from services.edge.openapi import BYTES, TEXT, raw_answer, raw_body
from services.edge.parameters import PathRef
from services.edge.problems import READ_ERRORS, WRITE_ERRORS, TooLarge, error_responses
from services.permissions.rules import ARTIFACT_WRITERS, require
from services.store.artifacts import MAX_ARTIFACT_BYTES, get_artifact, put_artifact

# What the document declares an upload as: a comment's text or any artifact's bytes. Any
# other well-formed media type is stored as given too (the README names none, and a corrected
# artifact may be of any kind); only a Content-Type that is no media type is refused (415),
# since it is kept with the artifact.
UPLOADED_AS = ("application/octet-stream", "text/plain")
DEFAULT_UPLOAD_TYPE = "text/plain; charset=utf-8"
# What a download answers (``download_headers``): UTF-8 text as text, anything else as bytes.
DOWNLOAD = raw_answer(
    "The artifact's bytes, as a download",
    # Bytes first: a client reading the first declared type reads any artifact whole.
    {"application/octet-stream": BYTES, "text/plain": TEXT},
)


def artifact_routes(http: Http) -> APIRouter:
    router = APIRouter(prefix="/factory/artifacts", tags=["artifacts"])

    @router.post("", status_code=201, response_model=ArtifactStored,
                 responses={**WRITE_ERRORS, **error_responses(415)},
                 openapi_extra=raw_body(*UPLOADED_AS))  # fmt: skip
    async def store(
        request: Request,
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.write"))],
    ) -> dict[str, Any]:
        """Store the body as an immutable artifact; answers its reference. Any media type
        is taken (`text/plain` when none is given) and kept with the artifact; a
        Content-Type that is no media type is refused (415). Only a role that writes what
        references an artifact uploads one (Requester, Reviewer, Operator; 403 otherwise)."""
        # Decisions D101: refused before the body is read, so a refused upload stores nothing.
        require(principal.roles, ARTIFACT_WRITERS, "storing an artifact")
        # Read here, not declared as a header parameter: a generated client would send it
        # beside the body's own Content-Type, twice.
        content_type = request.headers.get("content-type", DEFAULT_UPLOAD_TYPE)
        if "content-type" in request.headers:
            media_type(request)
        content = await request.body()
        if not content:
            raise Refused("an artifact cannot be empty", field="body")
        if len(content) > MAX_ARTIFACT_BYTES:
            raise TooLarge(MAX_ARTIFACT_BYTES)  # as every body over its route's bound
        ref = await put_artifact(http.pool, principal.tenant_id, content, content_type[:200])
        return {"ref": ref, "bytes": len(content)}

    @router.get("/{ref}", responses={200: DOWNLOAD, **READ_ERRORS})
    async def fetch(
        ref: PathRef,
        principal: Annotated[Principal, Depends(http.reading("factory.feedback.read"))],
    ) -> Response:
        """The artifact's bytes, as a download: never in the uploader's Content-Type."""
        _uploaded_as, content = await get_artifact(http.pool, principal.tenant_id, ref)
        return Response(content, headers=download_headers(content))

    return router


def download_headers(content: bytes) -> dict[str, str]:
    """Whoever uploads chooses the Content-Type, so serving it would let one
    person's ``text/html`` run as script in another's browser, on our origin. Text is served
    as plain text, anything else as bytes; never sniffed, never rendered inline."""
    try:
        content.decode("utf-8")
        media_type = "text/plain; charset=utf-8"
    except UnicodeDecodeError:
        media_type = "application/octet-stream"
    return {
        "Content-Type": media_type,
        "X-Content-Type-Options": "nosniff",
        "Content-Disposition": "attachment",
        "Content-Security-Policy": "default-src 'none'; sandbox",
    }
