"""The operations context, declared once: routes over the instance's readers, what they
parked and the scheduler's orders. It decides no command: a retry releases what a reader set
aside, as ``feedbackloop parked retry`` does, and the event store holds no record of it."""

from services.declaration import Context
from services.operations.api import operations_routes

OPERATIONS = Context("operations", routes=lambda http, given: operations_routes(http))
