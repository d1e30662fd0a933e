"""The moves a reviewer may make on a report's status (SPEC W32), and the check that refuses
any other: New ──► Triaged ──► Resolved | WontFix.
"""

from contracts.errors import InvalidTransition

# The moves a reviewer may make (W32): anything else is refused, naming both states.
REVIEW_MOVES = {("New", "Triaged"), ("Triaged", "Resolved"), ("Triaged", "WontFix")}


def check_review_move(status: str, to: str) -> None:
    """Refuse a review move from ``status`` to ``to`` that is not in ``REVIEW_MOVES``."""
    if (status, to) not in REVIEW_MOVES:
        raise InvalidTransition(
            f"a report cannot move from {status} to {to}",
            **{"from": status, "to": to},
        )
