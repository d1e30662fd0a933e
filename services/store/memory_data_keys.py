"""The data keys in memory, for a store without PostgreSQL (the library's in-memory recorder
the unit tests use): the same answers as ``services.store.data_keys.DataKeys``, with nothing
cached because nothing is shared."""

import os
from collections.abc import Iterable
from uuid import UUID, uuid4

from services.store.data_keys import DataKey, DataKeys
from services.store.master_keys import MasterKeys


class MemoryDataKeys(DataKeys):
    """The same keys in memory, for a store without PostgreSQL (the library's in-memory
    recorder the unit tests use)."""

    def __init__(self, masters: MasterKeys) -> None:
        super().__init__(lambda: None, masters)
        self._keys: dict[tuple[str, str, str], DataKey] = {}
        self._by_key_id: dict[UUID, DataKey] = {}
        self._bindings: dict[UUID, UUID] = {}

    def ensure_tables(self) -> None:
        pass

    def current_generation(self) -> int:
        return self.generation

    def make(self, owners: Iterable[tuple[str, str, str]]) -> None:
        for owner in owners:
            self.key_for(*owner)

    def key_for(self, tenant_id: str, person: str, scope: str) -> DataKey:
        owner = (tenant_id, person, scope)
        if owner not in self._keys:
            key = self._keys[owner] = DataKey(uuid4(), os.urandom(32))
            self._by_key_id[key.key_id] = key
        return self._keys[owner]

    def held_key(self, tenant_id: str, person: str, scope: str) -> DataKey | None:
        return self._keys.get((tenant_id, person, scope))

    def bind(self, aggregate_id: UUID, key_id: UUID) -> None:
        self._bindings.setdefault(aggregate_id, key_id)

    def bound_key(self, aggregate_id: UUID) -> DataKey | None:
        key_id = self._bindings.get(aggregate_id)
        key = None if key_id is None else self.key(key_id)
        return None if key_id is None or key is None else DataKey(key_id, key)

    def key(self, key_id: UUID) -> bytes | None:
        found = self._by_key_id.get(key_id)
        return None if found is None else found.key

    def person_keys(self, tenant_id: str, person: str) -> list[UUID]:
        return [k.key_id for (t, p, _), k in self._keys.items() if (t, p) == (tenant_id, person)]

    def destroy_person(self, tenant_id: str, person: str) -> list[UUID]:
        destroyed = self.person_keys(tenant_id, person)
        self._forget(destroyed)
        return destroyed

    def destroy_scopes_before(self, tenant_id: str, scope: str) -> list[UUID]:
        gone = [
            k.key_id for (t, _, s), k in self._keys.items() if t == tenant_id and "" < s < scope
        ]
        self._forget(gone)
        return gone

    def refresh(self) -> None:
        pass  # one process: nothing is destroyed elsewhere

    def _forget(self, destroyed: list[UUID]) -> None:
        self.generation += 1
        self._keys = {o: k for o, k in self._keys.items() if k.key_id not in destroyed}
        for key_id in destroyed:
            self._by_key_id.pop(key_id, None)

    def rewrap(self) -> int:
        return 0
