"""Privacy as a context: erasure of a person, access export, retention of old text."""

from contracts.privacy import ErasePerson, ExpireText
from services.declaration import Command, Context, Order
from services.permissions.rules import ADMIN, SERVICE_ONLY
from services.privacy.api import privacy_routes
from services.privacy.handlers import erase_person, expire_text
from services.privacy.published import PUBLICATIONS
from services.privacy.retention import retention_runner
from services.scheduling.orders import ExpireOldText

PRIVACY = Context(
    "privacy",
    commands=(
        Command(ErasePerson, erase_person, permits=ADMIN),
        Command(ExpireText, expire_text, permits=SERVICE_ONLY),
    ),
    routes=privacy_routes,
    publications=PUBLICATIONS,
    orders=(Order(ExpireOldText, retention_runner),),
)
