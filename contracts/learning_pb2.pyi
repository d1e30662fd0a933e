from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class GetDatasetSnapshotRequest(_message.Message):
    __slots__ = ("dataset_id", "version", "include_content")
    DATASET_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    dataset_id: str
    version: int
    include_content: bool
    def __init__(self, dataset_id: _Optional[str] = ..., version: _Optional[int] = ..., include_content: _Optional[bool] = ...) -> None: ...

class DatasetSnapshot(_message.Message):
    __slots__ = ("dataset_id", "tenant_id", "version", "snapshot_ref", "sha256", "task_count", "classification", "published_at", "content")
    DATASET_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_REF_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    TASK_COUNT_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    dataset_id: str
    tenant_id: str
    version: int
    snapshot_ref: str
    sha256: str
    task_count: int
    classification: str
    published_at: str
    content: bytes
    def __init__(self, dataset_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., version: _Optional[int] = ..., snapshot_ref: _Optional[str] = ..., sha256: _Optional[str] = ..., task_count: _Optional[int] = ..., classification: _Optional[str] = ..., published_at: _Optional[str] = ..., content: _Optional[bytes] = ...) -> None: ...
