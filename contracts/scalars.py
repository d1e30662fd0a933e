"""The scalar types every door reads with: HTTP bodies and paths, neighbour events over HTTP and
Kafka, the charter's TOML and gRPC requests. A value the store or a reader could not hold, or
a rule could not compute with, is refused where it comes in, naming its field (422 over HTTP,
a dead-letter reason on Kafka), never found later by a read model that parks on it.

- An instant carries its offset and lies within years 1 to 9999 in UTC once the offset is
  applied (``0001-01-01T00:00:00+23:59`` is year 0 in UTC: Python and PostgreSQL have none).
- Text holds no NUL, however it was spelt (raw, JSON ``\\u0000``, TOML ``\\u0000``):
  PostgreSQL text cannot hold it. Text that is only whitespace and invisible format characters
  (Unicode category Cf: zero-width space and joiners, word joiner, byte-order mark, bidi
  marks, soft hyphen) is blank: it says nothing a person can read.
- A number is finite and at most ``MAX_MAGNITUDE`` either way (see ``Measure``).
- A number or a date in a path is written one way only: ASCII digits, no sign, no leading
  zero, no separator, no point; a day is ``yyyy-MM-dd`` and nothing more.
- A reference in our own scheme is ``artifact:sha256:<64 hex digits>``, in its normal form.

What was accepted before a check was added is never refused by it: an event in the store is
read back (``services.store.event_store.ContractAsJSON``) in the ``STORED`` context, where the
checks made at the door (``at_the_door``) let it through as it was accepted.
"""

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from annotated_types import Interval
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, ValidationInfo

T = TypeVar("T")
STORED = {"stored": True}  # the validation context of reading what the store already holds


def at_the_door(check: Callable[[T], T]) -> AfterValidator:
    """``check`` as a validator of what comes in, skipped on reading what was stored."""

    def checked(value: T, info: ValidationInfo) -> T:
        context: Any = info.context
        if isinstance(context, dict) and context.get("stored"):
            return value
        return check(value)

    return AfterValidator(checked)


# ---- Text ------------------------------------------------------------------------------------


def no_nul(text: str) -> str:
    """PostgreSQL text cannot hold NUL: refuse it here, not in a read model later."""
    if "\x00" in text:
        raise ValueError("text must not contain NUL characters")
    return text


def is_blank(text: str) -> bool:
    """Only whitespace and invisible format characters (category Cf), or nothing at all."""
    first = text[:1]
    if first and first.isprintable() and not first.isspace():
        # Neither space nor Cf (Cf is never printable): the usual text, answered at once.
        return False
    return all(char.isspace() or unicodedata.category(char) == "Cf" for char in text)


def not_blank(text: str) -> str:
    if is_blank(text):
        raise ValueError("must not be blank (whitespace and zero-width characters count as none)")
    return text


def stripped(value: str) -> str:
    """Surrounding whitespace is not part of a reference."""
    return value.strip()


NoNul = AfterValidator(no_nul)  # never stored: PostgreSQL refused it, so nothing holds one
NotBlank = at_the_door(not_blank)

# Lengths count what was sent, as the published schema says (``strip_whitespace`` would count
# after stripping, and accept 513 characters with a leading space against maxLength 512).
Ref = Annotated[
    str, StringConstraints(min_length=1, max_length=512), NoNul, AfterValidator(stripped), NotBlank
]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200), NoNul, NotBlank]
Reason = Annotated[str, StringConstraints(min_length=1, max_length=2_000), NoNul, NotBlank]
# A label a team files things under: lowercase ASCII letters and digits in words joined by
# single hyphens, at most 40 characters (``wrong-node``, ``q3``). Refused otherwise, never
# folded into shape: a tag is one spelling, so that a filter by it finds them all (D172).
TAG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
Tag = Annotated[str, StringConstraints(min_length=1, max_length=40, pattern=TAG_PATTERN)]

# ---- References to our own artifacts ---------------------------------------------------------

ARTIFACT_SCHEME = "artifact:sha256:"
OUR_SCHEME = "artifact:"
HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def is_artifact_ref(ref: str) -> bool:
    """Whether the reference is in our own scheme, in any case; others name other systems."""
    return ref[: len(OUR_SCHEME)].lower() == OUR_SCHEME


def normal_artifact_ref(ref: str) -> str:
    """The one spelling of a reference in our scheme (a URI's scheme and a hash algorithm's
    name are case-insensitive; the store names artifacts by lower-case ``hexdigest()``); a
    reference in another scheme is returned as it is. Ours must be
    ``artifact:sha256:<64 hex digits>``, else ``ValueError``."""
    if not is_artifact_ref(ref):
        return ref
    normal = ref.lower()
    if not normal.startswith(ARTIFACT_SCHEME) or not HEX_DIGEST.fullmatch(
        normal.removeprefix(ARTIFACT_SCHEME)
    ):
        raise ValueError(f"{ref[:80]!r} is not an artifact reference: artifact:sha256:<hex>")
    return normal


# A reference that may name one of our artifacts: in our scheme, only in its one spelling.
MaybeArtifactRef = Annotated[Ref, at_the_door(normal_artifact_ref)]

# ---- Instants --------------------------------------------------------------------------------


def aware(value: datetime) -> datetime:
    if value.utcoffset() is None:
        raise ValueError("the instant needs its offset: 2026-11-30T08:00:00Z")
    return value


def within_utc_years(value: datetime) -> datetime:
    """An instant whose offset takes it past year 1 or 9999 in UTC is no instant Python or
    PostgreSQL can hold: PostgreSQL's timestamptz and Python's datetime have no year 0, nor
    one past 9999."""
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the instant is outside years 1 to 9999 in UTC") from None
    return value


Instant = Annotated[datetime, at_the_door(aware), at_the_door(within_utc_years)]

# ---- Numbers ---------------------------------------------------------------------------------

# A measured value (a metric, a baseline, a threshold, a gate's value): finite, and at most
# 10^15 either way. The rules add such values up and take means and differences of them
# (SPEC C30's expected effect is a mean over a cluster's evidence): a million of them at this
# bound sum to 10^21, far below a double's 1.8 * 10^308, and every whole number up to it is
# exact in a double (up to 2^53, about 9 * 10^15). No metric of an agent comes near it.
MAX_MAGNITUDE = 1e15
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def a_number(value: object, info: ValidationInfo) -> object:
    """A number, or a decimal number written as a string (neighbours read tolerantly): never a
    boolean (``true`` is no 1), nor Python's own spellings (``1_0``, non-ASCII digits), which
    JSON does not have. What the store holds was checked when it came in."""
    context: Any = info.context
    if isinstance(context, dict) and context.get("stored"):
        return value
    if isinstance(value, bool):
        raise ValueError("a number, not a boolean")
    if isinstance(value, str) and not _DECIMAL.fullmatch(value.strip()):
        raise ValueError("a number in decimal ASCII digits")
    return value


ANumber = BeforeValidator(a_number)  # last in each type, so the bounds stay in the schema
Measure = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE), ANumber]
# A count of something that happened: a whole number from 0 to a billion.
MAX_COUNT = 1_000_000_000
Count = Annotated[int, Field(ge=0, le=MAX_COUNT), ANumber]

# ---- Numbers, days and weeks written in a path -----------------------------------------------

_CANONICAL_NUMBER = re.compile(r"0|[1-9][0-9]{0,17}")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
WEEK_PATTERN = r"^[0-9]{4}-W[0-9]{2}$"


def canonical_number(value: object) -> object:
    """``1``, never ``01``, ``+1``, ``1.0``, ``1_0`` or other digits than ASCII's: one number
    has one path, so one resource has one address (and a cache one entry)."""
    if isinstance(value, str) and not _CANONICAL_NUMBER.fullmatch(value):
        raise ValueError("write the number in ASCII digits, without sign, leading zero or point")
    return value


def day_alone(value: object) -> object:
    """``yyyy-MM-dd`` in ASCII digits: a time or a Unix timestamp names no day."""
    if isinstance(value, str) and not _DAY.fullmatch(value):
        raise ValueError("write the day as yyyy-MM-dd (ASCII digits, no time)")
    return value


def calendar_week(value: str) -> str:
    """A week the ISO calendar has (``2026-W53``, not ``2025-W53``, ``-W54``, ``-W00`` or year
    0), as a day must be one the calendar has."""
    year, week = value.split("-W")
    try:
        date.fromisocalendar(int(year), int(week), 1)
    except ValueError:
        raise ValueError("the ISO calendar has no such week") from None
    return value


PathNumber = Annotated[int, BeforeValidator(canonical_number)]
# A dataset's version, wherever it is written: a path, a neighbour's event, a gRPC request.
# Bounded by ``annotated_types`` rather than ``Field``: FastAPI keeps these on a path
# parameter (and shows them as minimum and maximum), where a ``Field`` inside is dropped.
MAX_DATASET_VERSION = 1_000_000
DatasetVersion = Annotated[int, Interval(ge=1, le=MAX_DATASET_VERSION), ANumber]
Day = Annotated[date, BeforeValidator(day_alone)]
Week = Annotated[
    str, Field(pattern=WEEK_PATTERN, examples=["2026-W48"]), AfterValidator(calendar_week)
]


# ---- Webhook endpoints -----------------------------------------------------------------------

MAX_URL = 2_000
# Loopback hosts: a receiver on the same machine (a sidecar, a test's stand-in) may be plain
# http; anything that leaves the machine is https (decisions D192).
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def webhook_endpoint(value: str) -> str:
    """An absolute https URL with a host (http for a loopback host), no credentials in it and
    no fragment: the signature, not a password in the URL, proves the sender (D192)."""
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        raise ValueError("not a URL") from None
    if parts.scheme not in ("https", "http") or not host:
        raise ValueError("an absolute https URL with a host, such as https://hooks.example/in")
    if parts.scheme == "http" and host not in LOOPBACK_HOSTS and not host.startswith("127."):
        raise ValueError("https is required (plain http only to a loopback host)")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials do not belong in the URL: the body is signed instead")
    if parts.fragment:
        raise ValueError("a URL with a fragment (#...) is not an endpoint")
    if any(char.isspace() for char in value):
        raise ValueError("a URL holds no whitespace")
    return value


WebhookUrl = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_URL), NoNul, at_the_door(webhook_endpoint)
]


# ---- Trace links (W3C Trace Context) ---------------------------------------------------------

# A trace id is 16 bytes, a span (parent) id 8, written in lowercase hex; all zeros is the
# invalid value (W3C Trace Context, ``trace-id`` and ``parent-id``). Refused otherwise, never
# folded into shape: an id has one spelling, so a search in the tracing UI finds it (D260).
TRACE_ID_PATTERN = r"^[0-9a-f]{32}$"
SPAN_ID_PATTERN = r"^[0-9a-f]{16}$"


def not_all_zeros(value: str) -> str:
    if not value.strip("0"):
        raise ValueError("all zeros is W3C Trace Context's invalid id")
    return value


TraceId = Annotated[
    str,
    StringConstraints(min_length=32, max_length=32, pattern=TRACE_ID_PATTERN),
    AfterValidator(not_all_zeros),
    Field(examples=["4bf92f3577b34da6a3ce929d0e0e4736"]),
]
SpanId = Annotated[
    str,
    StringConstraints(min_length=16, max_length=16, pattern=SPAN_ID_PATTERN),
    AfterValidator(not_all_zeros),
    Field(examples=["00f067aa0ba902b7"]),
]
