"""Sealed fields opened where the log's readers read them (decisions D290, D291), on a real
PostgreSQL, through the followers' own page (``services.followers.decoding.read_page``): a
page whose words nobody reads decrypts nothing; a box of a page read before another process
erased its person reads as erased once this process has read a page since (D221)."""

from typing import Any

import pytest

from services.followers.decoding import read_page
from services.store.master_keys import MasterKeys
from services.store.opening import open_store
from services.store.sealing import ERASED, SealingMapper
from tests.integration.test_privacy_key_cache import drafted, written

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
MASTERS = MasterKeys()
DRAFTED = ["services.reports.domain:Report.Drafted"]


def test_a_page_whose_words_nobody_reads_decrypts_nothing(database_url: str) -> None:
    store = open_store(database_url, MASTERS)
    try:
        written(store, *(drafted(f"person-{n}", f"words {n}") for n in range(20)))
        mapper = store.mapper
        assert isinstance(mapper, SealingMapper)
        page = read_page(store, 0, 100, DRAFTED)
        events: list[Any] = [decoded.event().event for decoded in page.decoded]
        # What a read model that counts reports reads: their ids, tenants and categories.
        assert {(e.tenant_id, e.category) for e in events} == {("t1", "answer")}
        assert mapper.opened == 0
        assert [e.message for e in events] == [f"words {n}" for n in range(20)]
        assert mapper.opened == 20
    finally:
        store.close()


def test_a_box_read_after_another_process_erased_its_person_reads_erased(
    database_url: str,
) -> None:
    writer, reader = open_store(database_url, MASTERS), open_store(database_url, MASTERS)
    try:
        written(writer, drafted("pat", "pat's words"), drafted("kim", "kim's words"))
        before: list[Any] = [d.event().event for d in read_page(reader, 0, 10, DRAFTED).decoded]

        assert writer.data_keys.destroy_person("t1", "pat")
        written(writer, drafted("lee", "lee's words"))
        read_page(reader, 2, 10, DRAFTED)  # the next page: the reader learns of the erasure

        assert before[0].message == ERASED  # read before the erasure, opened after: erased
        assert before[0].reporter.startswith("erased:")
        assert before[1].message == "kim's words"
    finally:
        writer.close()
        reader.close()
