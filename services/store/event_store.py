"""The event store: the eventsourcing library on PostgreSQL, source of truth and outbox.

One ``Application`` holds every aggregate and one notification log. It uses the library's
process recorder so that new events and a tracking record (an inbound Kafka offset) commit
in one transaction. It is opened by ``services.store.opening.open_store``; its appends go
through ``services.store.columns_recorder.ColumnsRecorder``.
"""

from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import (
    JSONTranscoder,
    Mapper,
    ProcessRecorder,
    Transcoder,
    Transcoding,
)
from pydantic import BaseModel

from contracts.neighbours import RunCompleted
from contracts.scalars import STORED
from services.store.data_keys import DataKeys
from services.store.fast_event_json import FastJSONTranscoder
from services.store.master_keys import MasterKeys
from services.store.memory_data_keys import MemoryDataKeys
from services.store.sealing import SealingMapper

STORE_NAME = "FeedbackLoop"
EVENTS_TABLE = "feedbackloop_events"  # the library's naming: lower(name) + "_events"


class ContractAsJSON(Transcoding):
    """A contract model carried whole in an event (a received RunCompleted), stored as its
    JSON by its wire names and read back as the model."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model, self.type, self.name = model, model, model.__name__

    def encode(self, obj: Any) -> Any:
        return obj.model_dump(mode="json", by_alias=True)

    def decode(self, data: Any) -> Any:
        """Read back as it was accepted: checks added at the door since refuse nothing stored
        (``contracts.scalars.STORED``)."""
        return self.model.model_validate(data, context=STORED)


# Contract models that events carry as typed fields.
CONTRACTS_IN_EVENTS: tuple[type[BaseModel], ...] = (RunCompleted,)


class EventStore(Application[UUID]):
    name = STORE_NAME
    data_keys: DataKeys

    def construct_mapper(self) -> Mapper[UUID]:
        """The mapper that seals declared personal fields (services.store.sealing). The
        recorder is built after the mapper, so the keys reach its datastore when first asked;
        ``open_store`` sets the master keys from the settings."""
        if self.env.get("PERSISTENCE_MODULE") == "eventsourcing.postgres":
            keys = DataKeys(lambda: self.recorder.datastore, MasterKeys())  # type: ignore[attr-defined]
        else:
            keys = MemoryDataKeys(MasterKeys())
        self.data_keys = keys
        return SealingMapper(self.construct_transcoder(), self.data_keys)

    def construct_transcoder(self) -> Transcoder:
        transcoder = FastJSONTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        for model in CONTRACTS_IN_EVENTS:
            transcoder.register(ContractAsJSON(model))

    def construct_recorder(self) -> ProcessRecorder:
        recorder: ProcessRecorder = self.factory.process_recorder()
        return recorder

    @property
    def process_recorder(self) -> ProcessRecorder:
        recorder = self.recorder
        assert isinstance(recorder, ProcessRecorder)
        return recorder
