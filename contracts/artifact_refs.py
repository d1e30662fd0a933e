"""References to our own artifacts, ``artifact:sha256:<64 hex digits>``, in their one spelling.

A URI's scheme is case-insensitive (RFC 3986 §3.1), and so is the name of a hash algorithm:
``ARTIFACT:SHA256:…`` names the same artifact as ``artifact:sha256:…``. Every check and every
stored reference uses the normal form, so no spelling slips past the tenant check. The rule
itself is a scalar of the contracts (``contracts.scalars.normal_artifact_ref``), so a
neighbour's event is held to it as it is read; here it is a refusal naming the field.
"""

from contracts.errors import Refused
from contracts.scalars import ARTIFACT_SCHEME, normal_artifact_ref

SCHEME = ARTIFACT_SCHEME
__all__ = ["SCHEME", "normal_ref", "normal_refs"]


def normal_ref(ref: str, *, field: str) -> str:
    """The one spelling of a reference in our scheme; a reference in another scheme is
    returned as it is. Ours must be ``artifact:sha256:<64 hex digits>``, else refused."""
    try:
        return normal_artifact_ref(ref)
    except ValueError as error:
        raise Refused(str(error), field=field) from None


def normal_refs(refs: dict[str, str | None]) -> dict[str, str | None]:
    """Each field's reference in its normal form (None stays None)."""
    return {field: ref and normal_ref(ref, field=field) for field, ref in refs.items()}
