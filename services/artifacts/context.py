"""The artifact store's routes, declared as a context: it has no commands of its own (an
artifact is a row, not an event; SPEC C06)."""

from services.artifacts.api import artifact_routes
from services.declaration import Context

ARTIFACTS = Context("artifacts", routes=lambda http, given: artifact_routes(http))
