"""The key ring stood on the store's keys and grants (decisions D28, D29): a stored key
authenticates with the roles granted to its subject, a configured key keeps working and gains
the granted roles, a key or role gone from the standing is gone at the next lookup, and an
older standing never replaces a newer one."""

from projections.access import Standing, StoredKey
from services.edge.auth import ApiKeyEntry, KeyRing, hash_key

CONFIGURED, STORED = "fl_configured", "fl_stored"


def ring() -> KeyRing:
    entry = ApiKeyEntry(
        sha256=hash_key(CONFIGURED),
        tenant="acme",
        subject="alice",
        scopes=("factory.feedback.read",),
        roles=("Requester",),
    )
    return KeyRing([entry])


def stored(subject: str = "bruno") -> StoredKey:
    return StoredKey(hash_key(STORED), "acme", subject, ("factory.feedback.write",), False)


def test_a_stored_key_authenticates_with_the_roles_granted_to_its_subject() -> None:
    keys = ring()
    assert keys.identify(STORED) is None
    keys.stand(Standing((stored(),), (("acme", "bruno", "Reviewer"),), 5))
    principal = keys.identify(STORED)
    assert principal is not None
    assert (principal.tenant_id, principal.subject) == ("acme", "bruno")
    assert principal.scopes == frozenset({"factory.feedback.write"})
    assert principal.roles == frozenset({"Reviewer"})


def test_a_configured_key_keeps_its_own_roles_and_gains_the_granted_ones() -> None:
    keys = ring()
    keys.stand(Standing((), (("acme", "alice", "Observer"), ("other", "alice", "Operator")), 3))
    principal = keys.identify(CONFIGURED)
    assert principal is not None
    assert principal.roles == frozenset({"Requester", "Observer"})  # not another tenant's


def test_what_leaves_the_standing_is_gone_at_the_next_lookup_even_when_seen_before() -> None:
    keys = ring()
    keys.stand(Standing((stored(),), (("acme", "alice", "Observer"),), 5))
    assert keys.identify(STORED) is not None  # remembered by the ring from here on
    keys.stand(Standing((), (), 6))
    assert keys.identify(STORED) is None
    configured = keys.identify(CONFIGURED)
    assert configured is not None
    assert configured.roles == frozenset({"Requester"})


def test_an_older_standing_never_replaces_a_newer_one() -> None:
    keys = ring()
    keys.stand(Standing((), (), 9))
    keys.stand(Standing((stored(),), (), 4))  # a slow read, overtaken
    assert keys.identify(STORED) is None
    assert keys.standing.position == 9


def test_a_configured_key_wins_over_a_stored_key_of_the_same_hash() -> None:
    keys = ring()
    twin = StoredKey(hash_key(CONFIGURED), "other", "mallory", (), False)
    keys.stand(Standing((twin,), (), 2))
    principal = keys.identify(CONFIGURED)
    assert principal is not None
    assert (principal.tenant_id, principal.subject) == ("acme", "alice")
