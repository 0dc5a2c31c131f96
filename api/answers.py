"""Shapes of the resource library, connection and sync API bodies, for `/openapi.json`.

The handlers build these bodies as dicts (`resource_wire`, `connection_wire`, `log_wire`,
`_result_body`, `PullStatus.to_wire`); these models describe them. Every model forbids
unknown fields and leaves no always-present field optional, so
tests/api/test_openapi_routes.py, which validates real answers of every documented
operation against the document, fails when a handler and its model part ways.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from cartonize.models import ResponseModel
from cartonize.sync.connections import Frequency, Trigger
from cartonize.sync.mapping import DimConv, WeightConv
from cartonize.sync.resources import ResourceType
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ConnectionAnswer",
    "ConnectionList",
    "ConnectionLog",
    "ConnectionLogEntry",
    "PullRunAnswer",
    "ResourceAnswer",
    "ResourceChange",
    "ResourceList",
    "ResourcePage",
    "SyncError",
    "SyncWriteAnswer",
    "SyncWriteBody",
]

_COUNTS = {
    "received": "Records in the payload (or found at the Schema Root Path)",
    "inserted": "Records inserted as new rows",
    "updated": "Records whose row_key matched existing rows and changed them",
    "unchanged": (
        "Records whose row_key matched rows with nothing to change, and records dropped "
        "for a later one with the same row_key; received = inserted + updated + unchanged "
        "+ rejected"
    ),
    "rejected": (
        "Records whose values could not be cast (or, in an upsert, without a row_key "
        "value); each reason is in the log"
    ),
}


class ResourceAnswer(ResponseModel):
    """A resource list of the account (metadata)."""

    id: int = Field(description="Resource id")
    name: str = Field(description="Name of the resource")
    type: ResourceType = Field(description="What its rows are: items, cartons or orders")
    is_default: bool = Field(description="The account's default resource of its type")
    row_count: int = Field(description="Number of rows")
    created_at: datetime = Field(description="When the resource was created (UTC)")
    updated_at: datetime = Field(description="When its rows last changed (UTC)")


class ResourceList(ResponseModel):
    """The account's resources, newest first."""

    resources: list[ResourceAnswer] = Field(description="The resources")


class ResourcePage(ResourceAnswer):
    """A resource and one page of its rows."""

    rows: list[dict[str, Any]] = Field(
        description="Rows offset .. offset + limit; one property per column (docs/sync.md)"
    )
    next_offset: int | None = Field(
        default=None, description="Offset of the next page; absent on the last page"
    )


class ResourceChange(ResponseModel):
    """The one change a resource accepts: becoming the account's default of its type."""

    is_default: Literal[True] = Field(description="true: make this the default of its type")


class ConnectionAnswer(ResponseModel):
    """A connection as answered: its fields, credentials only as flags, and its URLs."""

    id: int = Field(description="Connection id within the plan")
    name: str = Field(description="Short label")
    resource_type: ResourceType = Field(description="items, cartons or orders")
    new_resource_base_name: str = Field(description="Prefix of new resources")
    resource_to_update: int | None = Field(
        description="Resource overwritten or updated by each import; null creates new ones"
    )
    third_party_api_url: str | None = Field(description="Source endpoint of pulls")
    third_party_api_key_set: bool = Field(description="Whether a third-party key is stored")
    third_party_api_token_set: bool = Field(description="Whether a third-party token is stored")
    api_headers_template: dict[str, str] | None = Field(
        description="Headers sent to the source; may use {{ api_key }} and {{ api_token }}"
    )
    schema_root_path: str | None = Field(
        description="Property of the source response holding the records"
    )
    schema_map: dict[str, str] = Field(
        description="Resource property -> source field (dot notation)"
    )
    start_at: str | None = Field(
        description="First scheduled run: wall time in timeZone, ISO 8601 without offset"
    )
    time_zone: str = Field(description="IANA time zone of startAt")
    sync_frequency: Frequency | None = Field(description="Schedule; null: no scheduled pulls")
    dim_conv: DimConv | None = Field(description="Length conversion of pulls")
    weight_conv: WeightConv | None = Field(description="Weight conversion of pulls")
    public_api_id: str = Field(description="Identifier of the connection in sync API URLs")
    api_secret_stem: str = Field(description="First 10 characters of the API secret")
    webhook_url: str = Field(description="URL of the webhook: GET pulls now")
    rest_url: str = Field(description="URL of the sync REST API (POST, PUT, PATCH)")
    created_at: datetime = Field(description="When the connection was created (UTC)")
    updated_at: datetime = Field(description="When it was last changed (UTC)")
    api_secret: str | None = Field(
        default=None,
        description="The API secret: only in the answers to create and to regenerate "
        "credentials, never again",
    )


class ConnectionList(ResponseModel):
    """The plan's connections."""

    connections: list[ConnectionAnswer] = Field(description="The connections")


class ConnectionLogEntry(ResponseModel):
    """One import or write of a connection."""

    at: datetime = Field(description="When it was logged (UTC)")
    trigger: Trigger = Field(description="What started it")
    status: Literal["success", "failure"] = Field(description="Whether it completed")
    resource_id: int | None = Field(description="The resource written, if any")
    received: int = Field(description=_COUNTS["received"])
    inserted: int = Field(description=_COUNTS["inserted"])
    updated: int = Field(description=_COUNTS["updated"])
    unchanged: int = Field(description=_COUNTS["unchanged"])
    rejected: int = Field(description=_COUNTS["rejected"])
    messages: list[str] = Field(description="Reasons of failures and rejections")
    duration_s: float | None = Field(
        alias="durationS", description="Seconds from the start to the log entry"
    )
    run_id: str | None = Field(alias="runId", description="The Dagster run of a pull")


class ConnectionLog(ResponseModel):
    """A page of a connection's log, newest first."""

    log: list[ConnectionLogEntry] = Field(description="Log entries")


class SyncWriteBody(BaseModel):
    """Body of a sync REST write: records in the source's field names."""

    payload: dict[str, Any] | list[dict[str, Any]] | str = Field(
        description="One object, an array of objects, or JSON text of either; the schema "
        "map is applied to each. PUT needs an array of complete objects"
    )
    row_key: str | list[str] | None = Field(
        default=None,
        description="Mapped property or properties rows are matched on (upsert); wins over "
        "the row_key parameter and the X-Service-Sync-Row-Key header",
    )


class SyncWriteAnswer(ResponseModel):
    """Outcome of a sync REST write; a 200 may still be a failure, so check `status`."""

    status: Literal["success", "failure"] = Field(
        description="failure: details in `message` and the connection log"
    )
    pack_resource_id: int | None = Field(
        default=None,
        description="POST only: the resource written (null on failure)",
    )
    received: int = Field(description=_COUNTS["received"])
    inserted: int = Field(description=_COUNTS["inserted"])
    updated: int = Field(description=_COUNTS["updated"])
    unchanged: int = Field(description=_COUNTS["unchanged"])
    rejected: int = Field(description=_COUNTS["rejected"])
    message: str | None = Field(default=None, description="Why a failure failed")


class PullRunAnswer(BaseModel):
    """State of a pull run (webhook); figures once it is done."""

    # The run fields are snake_case on the wire (spec), packResourceId as in the writes.
    model_config = ConfigDict(extra="forbid")

    status: Literal["queued", "running", "success", "failure"] = Field(
        description="queued or running: ask status_url again later"
    )
    run_id: str = Field(description="The Dagster run")
    pack_resource_id: int | None = Field(
        default=None,
        alias="packResourceId",
        description="Done runs: the resource written (null on failure)",
    )
    received: int | None = Field(default=None, description="Done runs: " + _COUNTS["received"])
    inserted: int | None = Field(default=None, description="Done runs: " + _COUNTS["inserted"])
    updated: int | None = Field(default=None, description="Done runs: " + _COUNTS["updated"])
    rejected: int | None = Field(default=None, description="Done runs: " + _COUNTS["rejected"])
    duration_s: float | None = Field(
        default=None, description="Done runs: seconds from the start of the pull to the commit"
    )
    message: str | None = Field(default=None, description="Why the pull failed")
    status_url: str = Field(description="Path of GET .../runs/{run_id} for this run")


class SyncError(BaseModel):
    """Error body of the sync API (its own shape, not the pack error body)."""

    model_config = ConfigDict(extra="forbid")

    error: str = Field(description="What went wrong, e.g. Unauthorized, Invalid JSON payload")
    details: str | None = Field(
        default=None,
        description="Where and how to fix it (422 Repeated JSON key: each key path named "
        "twice with different values; 409 Connection changed: the settings edited while "
        "the write was being prepared)",
    )
