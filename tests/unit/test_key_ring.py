"""``KeyRing.identify`` remembers the keys it has verified without trusting anything
but the key itself: the same answers as hashing every time, for live, unknown, revoked and
look-alike keys."""

import pytest

from services.edge.auth import ApiKeyEntry, KeyRing, new_key

pytestmark = pytest.mark.unit


def ring_of(*entries: dict[str, object]) -> KeyRing:
    return KeyRing(ApiKeyEntry.model_validate(entry) for entry in entries)


def test_a_live_key_is_known_every_time_and_others_never() -> None:
    key, entry = new_key("t1", "alice", ["factory.feedback.write"])
    other, other_entry = new_key("t2", "bot", ["factory.feedback.read"], service=True)
    ring = ring_of(entry, other_entry)
    for _ in range(3):
        principal = ring.identify(key)
        assert principal is not None
        assert (principal.tenant_id, principal.subject) == ("t1", "alice")
        assert principal.scopes == frozenset({"factory.feedback.write"})
        service = ring.identify(other)
        assert service is not None
        assert service.service
        assert ring.identify(key[:-1]) is None
        assert ring.identify(key + "x") is None
        assert ring.identify(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
        assert ring.identify("é" + key) is None  # not ASCII: refused, not an error


def test_a_revoked_key_is_not_known_even_where_it_was_before() -> None:
    key, entry = new_key("t1", "alice", ["factory.feedback.write"])
    assert ring_of(entry).identify(key) is not None
    assert ring_of({**entry, "revoked": True}).identify(key) is None


def test_a_key_that_only_shares_python_s_hash_with_a_known_one_is_not_trusted() -> None:
    key, entry = new_key("t1", "alice", ["factory.feedback.write"])
    ring = ring_of(entry)
    assert ring.identify(key) is not None  # now remembered under hash(key)

    class LookAlike(str):
        def __hash__(self) -> int:
            return hash(key)

    assert ring.identify(LookAlike("fl_not-the-key")) is None
    assert ring.identify(LookAlike(key)) is not None  # the key itself, whatever its type


def test_only_keys_that_matched_are_remembered() -> None:
    """Unknown keys cost their hash every time but take no room: the memory never holds
    more than the ring's live entries."""
    key, entry = new_key("t1", "alice", ["factory.feedback.write"])
    ring = ring_of(entry)
    for n in range(100):
        assert ring.identify(f"fl_guess-{n}") is None
    ring.identify(key)
    assert len(ring._verified) == 1
