"""Sync connections (spec §G): their fields, validation, storage, secrets and log.

A connection binds a JSON source to one resource list of an account. Its API secret is
generated on save and returned once; only its keyed hash and 10-character stem are kept.
The third-party key and token are stored encrypted and only ever decrypted for an
outbound pull (`credentials`), never returned by the API.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from cartonize import jsontext
from cartonize.errors import InvalidRequest
from cartonize.models import validation_details
from cartonize.store import Account, Store, StoreError, Tier, page_offset
from cartonize.sync.crypto import SecretBox
from cartonize.sync.headers import (
    HeadersTemplateError,
    header_value_problem,
    parse_headers_template,
)
from cartonize.sync.mapping import Conversions, DimConv, WeightConv, validate_schema_map
from cartonize.sync.resources import ResourceType, find_resource, one, resource_type

__all__ = [
    "CONNECTION_TIERS",
    "SECRET_STEM_LENGTH",
    "Connection",
    "ConnectionFields",
    "Credentials",
    "Frequency",
    "LogEntry",
    "Trigger",
    "authenticate_secret",
    "connection_by_id",
    "connection_by_public_id",
    "connection_in_transaction",
    "connections_allowed",
    "connections_refusal",
    "create_connection",
    "credentials",
    "delete_connection",
    "get_connection",
    "list_connections",
    "log_of_run",
    "read_log",
    "record_log",
    "regenerate_secret",
    "update_connection",
]

SECRET_STEM_LENGTH = 10
#: Plans that may have connections (an operator must also enable them per account).
CONNECTION_TIERS: tuple[Tier, ...] = ("premium", "enterprise")
Frequency = Literal["Hourly", "Daily", "Weekly", "Monthly"]
Trigger = Literal["rest POST", "rest PUT", "rest PATCH", "webhook", "schedule"]
Status = Literal["success", "failure"]


@dataclass(frozen=True)
class Credentials:
    """A connection's third-party key and token, decrypted for an outbound request."""

    api_key: str | None
    api_token: str | None


def _headers_template(value: object) -> dict[str, str] | None:
    """The one headers-template check (`cartonize.sync.headers`), for a JSON object or its text."""
    if value is None or value == "":
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        return parse_headers_template(text) or None
    except HeadersTemplateError as exc:
        raise ValueError(exc.message) from None


#: The years a connection's startAt may lie in (see `ConnectionFields._start_in_range`).
START_YEARS = (1900, 9000)


class ConnectionFields(BaseModel):
    """The editable fields of a connection as sent by a client (camelCase on the wire)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", str_strip_whitespace=True
    )

    name: str = Field(min_length=1, max_length=200, description="Short label")
    resource_type: ResourceType = Field(description="items, cartons or orders")
    new_resource_base_name: str | None = Field(
        default=None, max_length=200, description="Prefix of new resources (default: name)"
    )
    resource_to_update: int | None = Field(
        default=None, description="Resource id to overwrite or update; null creates new ones"
    )
    third_party_api_url: str | None = Field(
        default=None, max_length=2000, description="Fully qualified source endpoint (http/https)"
    )
    third_party_api_key: str | None = Field(
        default=None, max_length=4000, description="Write-only; template variable {{ api_key }}"
    )
    third_party_api_token: str | None = Field(
        default=None, max_length=4000, description="Write-only; template variable {{ api_token }}"
    )
    api_headers_template: dict[str, str] | None = Field(
        default=None, description="JSON object of headers sent to the source"
    )
    schema_root_path: str | None = Field(
        default=None, max_length=500, description="Property of the response holding the records"
    )
    schema_map: dict[str, str] = Field(
        default_factory=dict, description="Resource property -> source field (dot notation)"
    )
    start_at: datetime | None = Field(
        default=None, description="First scheduled run, wall time in timeZone"
    )
    time_zone: str = Field(default="UTC", description="IANA time zone of startAt")
    sync_frequency: Frequency | None = Field(
        default=None, description="Hourly, Daily, Weekly, Monthly, or null (no schedule)"
    )
    dim_conv: DimConv | None = Field(default=None, description="Length conversion of pulls")
    weight_conv: WeightConv | None = Field(default=None, description="Weight conversion of pulls")

    @field_validator("api_headers_template", mode="before")
    @classmethod
    def _headers(cls, value: object) -> object:
        return _headers_template(value)

    @field_validator("third_party_api_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
            raise ValueError("must be a fully qualified http:// or https:// URL")
        return value

    @field_validator("third_party_api_key", "third_party_api_token")
    @classmethod
    def _credential(cls, value: str | None) -> str | None:
        problem = header_value_problem(value) if value else None
        if problem is not None:
            # CR and LF, other control characters and non-ASCII: each pull would fail.
            raise ValueError(
                f"{problem}; it is sent in an HTTP header, so it must be printable ASCII"
            )
        return value or None

    @field_validator("start_at")
    @classmethod
    def _start_in_range(cls, value: datetime | None) -> datetime | None:
        # Within years 1900-9000 every conversion to the time zone, to UTC and to the
        # slots of any frequency stays inside datetime's range: 0001-01-01T01:00+10:06
        # overflowed when it was moved to the time zone (a 500).
        if value is not None and not START_YEARS[0] <= value.year <= START_YEARS[1]:
            raise ValueError(
                f"must lie between the years {START_YEARS[0]} and {START_YEARS[1]} "
                f"(got {value.isoformat()})"
            )
        return value

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}; use an IANA name such as UTC") from None
        return value

    @field_validator("schema_map", mode="before")
    @classmethod
    def _map_object(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                decoded = jsontext.loads(value, repeats="mark")
            except ValueError:
                raise ValueError("must be a JSON object") from None
            repeats = jsontext.repeats_details(decoded)
            if repeats is not None:
                raise ValueError(
                    f"{repeats}: which source field is meant is not clear; name each property once"
                )
            return decoded
        return value

    def checked(self) -> ConnectionFields:
        """Cross-field checks: the schema map against the resource type; startAt to wall time."""
        try:
            validate_schema_map(self.schema_map, self.resource_type)
        except ValueError as exc:
            raise InvalidRequest(details=f"schemaMap: {exc}") from None
        if self.start_at is not None and self.start_at.tzinfo is not None:
            local = self.start_at.astimezone(ZoneInfo(self.time_zone)).replace(tzinfo=None)
            return self.model_copy(update={"start_at": local})
        return self


def parse_fields(data: object) -> ConnectionFields:
    """Validate a client's connection JSON; InvalidRequest (422) names each bad field."""
    if not isinstance(data, dict):
        raise InvalidRequest(details="the body must be a JSON object of connection fields")
    try:
        return ConnectionFields.model_validate(data).checked()
    except ValidationError as exc:
        raise InvalidRequest(details=validation_details(exc)) from None


@dataclass(frozen=True)
class Connection:
    """A stored connection (credentials encrypted, secret only as hash and stem)."""

    id: int
    account_id: int
    public_api_id: str
    name: str
    resource_type: ResourceType
    base_name: str
    resource_to_update: int | None
    url: str | None
    api_key_encrypted: str | None
    api_token_encrypted: str | None
    headers_template: dict[str, str] | None
    schema_root_path: str | None
    schema_map: dict[str, str]
    start_at: datetime | None
    time_zone: str
    frequency: Frequency | None
    dim_conv: DimConv | None
    weight_conv: WeightConv | None
    secret_hash: str
    secret_stem: str
    created_at: datetime
    updated_at: datetime

    @property
    def conversions(self) -> Conversions:
        """The unit conversions stored with the connection."""
        return Conversions(self.dim_conv, self.weight_conv)

    def fields(self) -> ConnectionFields:
        """The editable fields (credentials left out: they are write-only)."""
        return ConnectionFields(
            name=self.name,
            resource_type=self.resource_type,
            new_resource_base_name=self.base_name,
            resource_to_update=self.resource_to_update,
            third_party_api_url=self.url,
            api_headers_template=self.headers_template,
            schema_root_path=self.schema_root_path,
            schema_map=self.schema_map,
            start_at=self.start_at,
            time_zone=self.time_zone,
            sync_frequency=self.frequency,
            dim_conv=self.dim_conv,
            weight_conv=self.weight_conv,
        )


_COLUMNS = (
    "id, account_id, public_api_id, name, resource_type, base_name, resource_to_update, url, "
    "api_key_encrypted, api_token_encrypted, headers_template, schema_root_path, schema_map, "
    "start_at, time_zone, frequency, dim_conv, weight_conv, secret_hash, secret_stem, "
    "created_at, updated_at"
)


def _connection(row: Sequence[Any]) -> Connection:
    values = list(row)
    values[4] = resource_type(values[4])
    values[10] = json.loads(values[10]) if values[10] is not None else None
    values[12] = json.loads(values[12])
    values[20] = values[20].replace(tzinfo=UTC)
    values[21] = values[21].replace(tzinfo=UTC)
    return Connection(*values)


def _db_time(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def _new_secret() -> str:
    return secrets.token_hex(24)


def _check_resource_to_update(
    con: duckdb.DuckDBPyConnection, account_id: int, fields: ConnectionFields
) -> None:
    if fields.resource_to_update is None:
        return
    found = find_resource(con, fields.resource_to_update)
    if found is None or found.account_id != account_id:
        raise InvalidRequest(
            details=f"resourceToUpdate: no resource {fields.resource_to_update} in this account"
        )
    if found.type != fields.resource_type:
        raise InvalidRequest(
            details=(
                f"resourceToUpdate: resource {found.id} holds {found.type}, "
                f"but the connection's resourceType is {fields.resource_type}"
            )
        )


def _values(fields: ConnectionFields) -> list[object]:
    return [
        fields.name,
        fields.resource_type,
        fields.new_resource_base_name or fields.name,
        fields.resource_to_update,
        fields.third_party_api_url,
        json.dumps(fields.api_headers_template) if fields.api_headers_template else None,
        fields.schema_root_path or None,
        json.dumps(fields.schema_map),
        fields.start_at,
        fields.time_zone,
        fields.sync_frequency,
        fields.dim_conv,
        fields.weight_conv,
    ]


_EDITABLE = (
    "name = ?, resource_type = ?, base_name = ?, resource_to_update = ?, url = ?, "
    "headers_template = ?, schema_root_path = ?, schema_map = ?, start_at = ?, time_zone = ?, "
    "frequency = ?, dim_conv = ?, weight_conv = ?"
)


def create_connection(
    store: Store, box: SecretBox, account_id: int, fields: ConnectionFields, now: datetime
) -> tuple[Connection, str]:
    """Save a new connection; return it and its API secret (shown once, never stored)."""
    secret = _new_secret()
    public_api_id = secrets.token_hex(16)

    def insert(con: duckdb.DuckDBPyConnection) -> Connection:
        _check_resource_to_update(con, account_id, fields)
        row = one(con.execute("SELECT coalesce(max(id), 0) + 1 FROM connections"))
        new_id = int(row[0]) if row else 1
        key, token = fields.third_party_api_key, fields.third_party_api_token
        con.execute(
            f"INSERT INTO connections ({_COLUMNS}) VALUES ({', '.join('?' * 22)})",
            [
                new_id,
                account_id,
                public_api_id,
                *_values(fields)[:5],
                box.encrypt(key) if key else None,
                box.encrypt(token) if token else None,
                *_values(fields)[5:],
                box.hash_secret(secret),
                secret[:SECRET_STEM_LENGTH],
                _db_time(now),
                _db_time(now),
            ],
        )
        return _get(con, new_id)

    return store.transaction(insert), secret


def _get(con: duckdb.DuckDBPyConnection, connection_id: int) -> Connection:
    row = one(con.execute(f"SELECT {_COLUMNS} FROM connections WHERE id = ?", [connection_id]))
    if row is None:
        raise StoreError(f"no connection {connection_id}")
    return _connection(row)


def get_connection(store: Store, account_id: int, connection_id: int) -> Connection | None:
    """The account's connection with this id, or None."""
    row = store.transaction(
        lambda con: one(
            con.execute(
                f"SELECT {_COLUMNS} FROM connections WHERE id = ? AND account_id = ?",
                [connection_id, account_id],
            )
        )
    )
    return _connection(row) if row else None


def connection_by_id(store: Store, connection_id: int) -> Connection | None:
    """The connection with this id in any account, or None (for the pull pipeline)."""
    row = store.transaction(
        lambda con: one(
            con.execute(f"SELECT {_COLUMNS} FROM connections WHERE id = ?", [connection_id])
        )
    )
    return _connection(row) if row else None


def connection_in_transaction(
    con: duckdb.DuckDBPyConnection, connection_id: int
) -> Connection | None:
    """The connection with this id as `con`'s transaction sees it, or None when it is gone
    or its account may no longer use connections (the rule of `connections_refusal`).

    A pull's write reads it in the write's own transaction: every unit of work holds the
    store's lock, so no edit can land between this read and that transaction's commit."""
    row = one(
        con.execute(
            f"SELECT {', '.join('c.' + c.strip() for c in _COLUMNS.split(','))} "
            "FROM connections c JOIN accounts a ON a.id = c.account_id "
            "JOIN connection_grants g ON g.account_id = c.account_id "
            f"WHERE c.id = ? AND a.tier IN ({', '.join('?' for _ in CONNECTION_TIERS)})",
            [connection_id, *CONNECTION_TIERS],
        )
    )
    return _connection(row) if row else None


def connections_refusal(store: Store, account: Account | None) -> str | None:
    """Why the account may not use connections now, or None when it may: the one rule
    (premium or enterprise, and enabled by an operator) every entry point applies."""
    if account is None:
        return "no such account"
    if account.tier not in CONNECTION_TIERS:
        return f"connections need a premium or enterprise plan (this plan is {account.tier})"
    if not store.connections_enabled(account.id):
        return "connections are not enabled for this account; ask support"
    return None


def connections_allowed(store: Store, account_id: int) -> bool:
    """Whether the account may use connections now."""
    return connections_refusal(store, store.account_by_id(account_id)) is None


def connection_by_public_id(store: Store, public_api_id: str) -> Connection | None:
    """The connection addressed by a sync API URL, or None."""
    row = store.transaction(
        lambda con: one(
            con.execute(
                f"SELECT {_COLUMNS} FROM connections WHERE public_api_id = ?", [public_api_id]
            )
        )
    )
    return _connection(row) if row else None


def list_connections(store: Store, account_id: int | None = None) -> list[Connection]:
    """Connections by id, of one account or (for the scheduler) of all accounts whose
    connections are currently allowed (premium or enterprise, and enabled)."""
    if account_id is not None:
        query = f"SELECT {_COLUMNS} FROM connections WHERE account_id = ? ORDER BY id"
        params: list[object] = [account_id]
    else:
        query = (
            f"SELECT {', '.join('c.' + c.strip() for c in _COLUMNS.split(','))} "
            "FROM connections c JOIN accounts a ON a.id = c.account_id "
            "JOIN connection_grants g ON g.account_id = c.account_id "
            f"WHERE a.tier IN ({', '.join('?' for _ in CONNECTION_TIERS)}) ORDER BY c.id"
        )
        params = list(CONNECTION_TIERS)
    rows = store.transaction(lambda con: con.execute(query, params).fetchall())
    return [_connection(row) for row in rows]


def update_connection(
    store: Store,
    box: SecretBox,
    account_id: int,
    connection_id: int,
    changes: Mapping[str, Any],
    now: datetime,
) -> Connection | None:
    """Apply a partial update (wire names); credentials change only when given (null clears).

    Raises InvalidRequest naming the field when the result is not a valid connection.
    """
    current = get_connection(store, account_id, connection_id)
    if current is None:
        return None
    merged = current.fields().model_dump(by_alias=True)
    merged.update(changes)
    fields = parse_fields(merged)
    set_key = "thirdPartyApiKey" in changes or "third_party_api_key" in changes
    set_token = "thirdPartyApiToken" in changes or "third_party_api_token" in changes

    def update(con: duckdb.DuckDBPyConnection) -> Connection:
        _check_resource_to_update(con, account_id, fields)
        extra = ""
        params = _values(fields)
        for flag, column, value in (
            (set_key, "api_key_encrypted", fields.third_party_api_key),
            (set_token, "api_token_encrypted", fields.third_party_api_token),
        ):
            if flag:
                extra += f", {column} = ?"
                params.append(box.encrypt(value) if value else None)
        con.execute(
            f"UPDATE connections SET {_EDITABLE}{extra}, updated_at = ? WHERE id = ?",
            [*params, _db_time(now), connection_id],
        )
        return _get(con, connection_id)

    return store.transaction(update)


def delete_connection(store: Store, account_id: int, connection_id: int) -> bool:
    """Delete a connection and its log (its resources stay); False when there is none."""

    def delete(con: duckdb.DuckDBPyConnection) -> bool:
        row = one(
            con.execute(
                "SELECT count(*) FROM connections WHERE id = ? AND account_id = ?",
                [connection_id, account_id],
            )
        )
        if not row or not row[0]:
            return False
        con.execute("DELETE FROM connection_log WHERE connection_id = ?", [connection_id])
        con.execute("DELETE FROM connections WHERE id = ?", [connection_id])
        return True

    return store.transaction(delete)


def regenerate_secret(
    store: Store, box: SecretBox, account_id: int, connection_id: int, now: datetime
) -> tuple[Connection, str] | None:
    """Replace the API secret; the old one stops working with this commit."""
    secret = _new_secret()

    def update(con: duckdb.DuckDBPyConnection) -> Connection | None:
        changed = con.execute(
            "UPDATE connections SET secret_hash = ?, secret_stem = ?, updated_at = ? "
            "WHERE id = ? AND account_id = ? RETURNING id",
            [
                box.hash_secret(secret),
                secret[:SECRET_STEM_LENGTH],
                _db_time(now),
                connection_id,
                account_id,
            ],
        ).fetchall()
        return _get(con, connection_id) if changed else None

    found = store.transaction(update)
    return (found, secret) if found else None


# A hash no secret has, compared when the public id is unknown so that the answer takes
# as long as for a known id.
_NO_HASH = "0" * 64


def authenticate_secret(
    store: Store, box: SecretBox, public_api_id: str, secret: str | None
) -> Connection | None:
    """The connection of `public_api_id` when `secret` is its API secret, else None."""
    found = connection_by_public_id(store, public_api_id) if len(public_api_id) <= 64 else None
    stored = found.secret_hash if found else _NO_HASH
    ok = box.secret_matches(secret or "", stored)
    return found if ok and found is not None and secret else None


def credentials(box: SecretBox, connection: Connection) -> Credentials:
    """The decrypted third-party key and token, for an outbound pull only."""
    return Credentials(
        box.decrypt(connection.api_key_encrypted) if connection.api_key_encrypted else None,
        box.decrypt(connection.api_token_encrypted) if connection.api_token_encrypted else None,
    )


# --------------------------------------------------------------------------- log


@dataclass
class LogEntry:
    """One import or write of a connection, as recorded in its log."""

    trigger: Trigger
    status: Status
    at: datetime
    resource_id: int | None = None
    received: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    messages: list[str] = field(default_factory=list)
    #: Seconds from the start of a pull (or write) to its log entry; None for older entries.
    duration_s: float | None = None
    #: The Dagster run of a pull (scheduled or webhook); None for REST writes.
    run_id: str | None = None


_LOG_COLUMNS = (
    "id, connection_id, logged_at, trigger, status, resource_id, received, inserted, updated, "
    "unchanged, rejected, messages, duration_s, run_id"
)


def record_log(con: duckdb.DuckDBPyConnection, connection_id: int, entry: LogEntry) -> None:
    """Append a log entry inside the caller's transaction."""
    row = one(con.execute("SELECT coalesce(max(id), 0) + 1 FROM connection_log"))
    con.execute(
        f"INSERT INTO connection_log ({_LOG_COLUMNS}) VALUES ({', '.join('?' * 14)})",
        [
            int(row[0]) if row else 1,
            connection_id,
            _db_time(entry.at),
            entry.trigger,
            entry.status,
            entry.resource_id,
            entry.received,
            entry.inserted,
            entry.updated,
            entry.unchanged,
            entry.rejected,
            json.dumps(entry.messages),
            entry.duration_s,
            entry.run_id,
        ],
    )


def read_log(store: Store, connection_id: int, *, limit: int, offset: int) -> list[LogEntry]:
    """A connection's log, newest first."""
    rows = store.transaction(
        lambda con: con.execute(
            f"SELECT {_READ_COLUMNS} FROM connection_log WHERE connection_id = ? "
            "ORDER BY logged_at DESC, id DESC LIMIT ? OFFSET ?",
            [connection_id, limit, page_offset(offset)],
        ).fetchall()
    )
    return [_log_entry(row) for row in rows]


def log_of_run(store: Store, run_id: str) -> tuple[int, LogEntry] | None:
    """The log entry a pull run wrote and its connection id, or None (not written yet)."""
    row = store.transaction(
        lambda con: one(
            con.execute(
                f"SELECT connection_id, {_READ_COLUMNS} FROM connection_log WHERE run_id = ? "
                "ORDER BY id DESC LIMIT 1",
                [run_id],
            )
        )
    )
    return (int(row[0]), _log_entry(row[1:])) if row else None


_READ_COLUMNS = (
    "trigger, status, logged_at, resource_id, received, inserted, updated, unchanged, rejected, "
    "messages, duration_s, run_id"
)


def _log_entry(row: Sequence[Any]) -> LogEntry:
    return LogEntry(
        trigger=row[0],
        status=row[1],
        at=row[2].replace(tzinfo=UTC),
        resource_id=row[3],
        received=row[4],
        inserted=row[5],
        updated=row[6],
        unchanged=row[7],
        rejected=row[8],
        messages=json.loads(row[9]),
        duration_s=row[10],
        run_id=row[11],
    )
