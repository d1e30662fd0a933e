"""The roles a person or service holds in a tenant (SPEC C52), beside the scopes.

A role says what its holder may decide; the rules of each are written down in
``docs/decisions.md`` and enforced where commands are decided, so every door obeys them alike.
"""

from typing import Literal, get_args

Role = Literal[
    "Requester",
    "Reviewer",
    "AssetMaintainer",
    "Operator",
    "PlatformAdmin",
    "Observer",
]
ROLES: tuple[Role, ...] = get_args(Role)
