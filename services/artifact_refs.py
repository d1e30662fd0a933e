"""References to our own artifacts, ``artifact:sha256:<64 hex digits>``, in their one spelling.

A URI's scheme is case-insensitive (RFC 3986 §3.1), and so is the name of a hash algorithm:
``ARTIFACT:SHA256:…`` names the same artifact as ``artifact:sha256:…``. Every check and every
stored reference uses the normal form, so no spelling slips past the tenant check (issue 8).
The hex digits are lower-cased too: the store names artifacts by ``hexdigest()``.
"""

import re

from services.errors import Refused

SCHEME = "artifact:sha256:"
OUR_SCHEME = "artifact:"
HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def is_artifact_ref(ref: str) -> bool:
    """Whether the reference is in our own scheme, in any case; others name other systems."""
    return ref[: len(OUR_SCHEME)].lower() == OUR_SCHEME


def normal_ref(ref: str, *, field: str) -> str:
    """The one spelling of a reference in our scheme; a reference in another scheme is
    returned as it is. Ours must be ``artifact:sha256:<64 hex digits>``, else refused."""
    if not is_artifact_ref(ref):
        return ref
    normal = ref.lower()
    if not normal.startswith(SCHEME) or not HEX_DIGEST.fullmatch(normal.removeprefix(SCHEME)):
        raise Refused(f"{ref} is not an artifact reference: artifact:sha256:<hex>", field=field)
    return normal


def normal_refs(refs: dict[str, str | None]) -> dict[str, str | None]:
    """Each field's reference in its normal form (None stays None)."""
    return {field: ref and normal_ref(ref, field=field) for field, ref in refs.items()}
