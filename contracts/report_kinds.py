"""A wrong-answer report's categories and kinds, and whom each kind is addressed to.

SPEC §3.3 (kinds and their addressees), W19, W20, W34: the words a report's labelled block and
its readers (the Inbox, eval cases, digests) share. The kind table is SPEC's *proposed* decision,
pinned in tests/unit/test_routing.py.
"""

from enum import StrEnum


class Category(StrEnum):
    """The categories a Feedback report is filed under."""

    bug = "bug"
    idea = "idea"
    praise = "praise"
    question = "question"
    answer = "answer"


def parse_category(text: str | None) -> Category | None:
    """The category named by ``text`` (trimmed, any case), or None when it names none."""
    try:
        return Category((text or "").strip().casefold())
    except ValueError:
        return None


class Addressee(StrEnum):
    """Who a wrong-answer report belongs to (SPEC §3.3, proposed)."""

    agent_owner = "agent owner"
    engineering_triage = "engineering triage"
    node_owner = "node owner"  # of the space holding the node: the one who can grant access
    content_owner = "content owner"
    inbox_reviewer = "Inbox reviewer"


class Kind(StrEnum):
    """Why an answer was wrong (SPEC §3.3: a proposed closed set, confirmed by no seed)."""

    not_found = "not-found"  # the node was readable; the agent did not look
    retrieval = "retrieval"  # the agent looked; the platform returned nothing readable
    no_access = "no-access"  # the user (hence the agent) cannot read the node
    fabricated = "fabricated"  # a value absent from, or contrary to, the evidence
    outdated = "outdated"  # grounded in a stale node
    other = "other"

    @property
    def category(self) -> Category:
        """W19, W20: retrieval is filed as a bug (so handed over, W26), the rest as answers."""
        return Category.bug if self is Kind.retrieval else Category.answer

    @property
    def addressee(self) -> Addressee:
        return _ADDRESSEES[self]


_ADDRESSEES: dict[Kind, Addressee] = {
    Kind.not_found: Addressee.agent_owner,  # W34
    Kind.retrieval: Addressee.engineering_triage,  # routes itself (W31)
    Kind.no_access: Addressee.node_owner,
    Kind.fabricated: Addressee.agent_owner,  # and counted per model
    Kind.outdated: Addressee.content_owner,
    Kind.other: Addressee.inbox_reviewer,
}


def parse_kind(text: str | None) -> Kind | None:
    """The kind named by ``text`` (trimmed, any case), or None when it names none."""
    try:
        return Kind((text or "").strip().casefold())
    except ValueError:
        return None


def canonical_kind(text: str) -> str:
    """SPEC §3.4: a known kind in its canonical spelling (``Fabricated`` → ``fabricated``); an
    unknown one is kept as written, so it is shown to people but never taken for a kind."""
    known = parse_kind(text)
    return text if known is None else known.value
