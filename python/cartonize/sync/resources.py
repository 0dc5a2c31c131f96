"""Resource library lists (items, cartons, orders): their row schemas, reads and deletes.

A resource is a named list owned by an account. Its rows live in one table per resource
type (`resource_items`, `resource_cartons`, `resource_orders`) whose columns are the
resource properties of `PROPERTIES`, plus the owning `resource_id` and the row's position
`pos`, which keeps rows in the order they were written. `properties` holds a JSON object
as text. Writes are in `cartonize.sync.writes`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import duckdb

from cartonize.store import Store, StoreError, page_offset

__all__ = [
    "PROPERTIES",
    "RESOURCE_TYPES",
    "Property",
    "Resource",
    "ResourceInUse",
    "ResourceType",
    "count_rows",
    "create_resource",
    "delete_resource",
    "find_resource",
    "get_resource",
    "library_resource",
    "list_resources",
    "one",
    "property_names",
    "read_rows",
    "rows_csv",
    "set_default",
    "table_of",
]

ResourceType = Literal["items", "cartons", "orders"]
RESOURCE_TYPES: tuple[str, ...] = get_args(ResourceType)
PropertyKind = Literal["string", "float", "integer", "object"]
#: Which unit conversion applies to a property: lengths follow `dim_conv`, weights `weight_conv`.
Unit = Literal["length", "weight"]


@dataclass(frozen=True)
class Property:
    """One column of a resource's rows."""

    name: str
    kind: PropertyKind
    required: bool = False
    unit: Unit | None = None
    description: str = ""


def _dims(prefix: str, required: bool, what: str) -> tuple[Property, ...]:
    return tuple(
        Property(f"{prefix}_{axis}", "float", required, "length", f"{what}, axis {axis} ({role})")
        for axis, role in (("x", "height"), ("y", "width"), ("z", "length"))
    )


_PROPERTIES_OBJECT = Property(
    "properties", "object", description="Free-form JSON object; map keys as properties.<key>"
)

#: Row schema of each resource type, in column order. Changing it needs a migration.
PROPERTIES: dict[ResourceType, tuple[Property, ...]] = {
    "items": (
        Property("refId", "string", True, description="Item reference (integer or string)"),
        *_dims("dimensions", True, "Item size"),
        Property("weight", "float", unit="weight", description="Weight of one item"),
        Property("name", "string", description="Descriptive name"),
        Property("color", "string", description="Colour name or #RRGGBB"),
        Property("sequence", "string", description="Aisle-bin sequence value"),
        _PROPERTIES_OBJECT,
    ),
    "cartons": (
        Property("refId", "string", True, description="Carton reference (integer or string)"),
        Property("name", "string", description="Name of the box type"),
        *_dims("dimensions", True, "Inner packable size"),
        Property("weightMax", "float", True, "weight", "Max gross weight (items plus tare)"),
        Property("weightTare", "float", unit="weight", description="Empty weight of the box"),
        Property("price", "integer", description="Fixed price in cents"),
        *_dims("outer_dimensions", False, "Outer size"),
        _PROPERTIES_OBJECT,
    ),
    "orders": (
        Property("orderId", "string", True, description="Order identifier"),
        Property("refId", "string", True, description="refId of the item in the items list"),
        Property("quantity", "integer", True, description="Units of the item in the order"),
        Property("sequence", "string", description="Aisle-bin sequence value"),
        _PROPERTIES_OBJECT,
    ),
}


def property_names(resource_type: ResourceType) -> list[str]:
    """Column names of a resource type's rows, in order."""
    return [p.name for p in PROPERTIES[resource_type]]


def table_of(resource_type: ResourceType) -> str:
    """The table holding rows of this resource type."""
    if resource_type not in RESOURCE_TYPES:
        raise ValueError(f"unknown resource type {resource_type!r}")
    return f"resource_{resource_type}"


def resource_type(value: object) -> ResourceType:
    """Narrow a stored or sent text to a ResourceType; ValueError when it is none."""
    for known in get_args(ResourceType):
        if value == known:
            typed: ResourceType = known
            return typed
    raise ValueError(f"must be one of {', '.join(RESOURCE_TYPES)} (got {value!r})")


class ResourceInUse(StoreError):
    """A resource cannot be deleted while a connection updates it."""


@dataclass(frozen=True)
class Resource:
    """A resource list: who owns it, what it holds, how many rows."""

    id: int
    account_id: int
    type: ResourceType
    name: str
    is_default: bool
    created_at: datetime
    updated_at: datetime
    row_count: int


_SELECT = (
    "SELECT r.id, r.account_id, r.type, r.name, r.is_default, r.created_at, r.updated_at, "
    "(SELECT count(*) FROM resource_items i WHERE i.resource_id = r.id) + "
    "(SELECT count(*) FROM resource_cartons c WHERE c.resource_id = r.id) + "
    "(SELECT count(*) FROM resource_orders o WHERE o.resource_id = r.id) "
    "FROM resources r"
)


def one(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    """The first row of a query result, read to the end: DuckDB 2 keeps a connection busy
    until its last result is fully read."""
    rows = result.fetchall()
    return tuple(rows[0]) if rows else None


def _resource(row: Sequence[Any]) -> Resource:
    rid, account_id, rtype, name, is_default, created, updated, count = row
    return Resource(
        int(rid),
        int(account_id),
        resource_type(rtype),
        str(name),
        bool(is_default),
        created.replace(tzinfo=UTC),
        updated.replace(tzinfo=UTC),
        int(count),
    )


def _db_time(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def create_resource(
    con: duckdb.DuckDBPyConnection,
    account_id: int,
    rtype: ResourceType,
    name: str,
    now: datetime,
) -> int:
    """Add an empty resource inside the caller's transaction; return its id."""
    row = one(con.execute("SELECT coalesce(max(id), 0) + 1 FROM resources"))
    new_id = int(row[0]) if row else 1
    con.execute(
        "INSERT INTO resources VALUES (?, ?, ?, ?, false, ?, ?)",
        [new_id, account_id, rtype, name, _db_time(now), _db_time(now)],
    )
    return new_id


def find_resource(con: duckdb.DuckDBPyConnection, resource_id: int) -> Resource | None:
    """The resource with this id inside the caller's transaction."""
    row = one(con.execute(_SELECT + " WHERE r.id = ?", [resource_id]))
    return _resource(row) if row else None


def get_resource(store: Store, account_id: int, resource_id: int) -> Resource | None:
    """The account's resource with this id, or None (another account's is None too)."""
    found = store.transaction(lambda con: find_resource(con, resource_id))
    return found if found is not None and found.account_id == account_id else None


def list_resources(
    store: Store, account_id: int, rtype: ResourceType | None = None
) -> list[Resource]:
    """The account's resources, newest first, optionally of one type."""
    query = _SELECT + " WHERE r.account_id = ?"
    params: list[object] = [account_id]
    if rtype is not None:
        query += " AND r.type = ?"
        params.append(rtype)
    query += " ORDER BY r.created_at DESC, r.id DESC"
    rows = store.transaction(lambda con: con.execute(query, params).fetchall())
    return [_resource(row) for row in rows]


def library_resource(
    con: duckdb.DuckDBPyConnection, account_id: int, rtype: ResourceType
) -> int | None:
    """The resource packing draws on: the account's default of this type, else the newest."""
    row = one(
        con.execute(
            "SELECT id FROM resources WHERE account_id = ? AND type = ? "
            "ORDER BY is_default DESC, created_at DESC, id DESC LIMIT 1",
            [account_id, rtype],
        )
    )
    return int(row[0]) if row else None


def set_default(store: Store, account_id: int, resource_id: int) -> Resource | None:
    """Mark a resource as its account's default of its type (and unmark the others)."""

    def mark(con: duckdb.DuckDBPyConnection) -> Resource | None:
        found = find_resource(con, resource_id)
        if found is None or found.account_id != account_id:
            return None
        con.execute(
            "UPDATE resources SET is_default = (id = ?) WHERE account_id = ? AND type = ?",
            [resource_id, account_id, found.type],
        )
        return find_resource(con, resource_id)

    return store.transaction(mark)


def delete_resource(store: Store, account_id: int, resource_id: int) -> bool:
    """Delete the account's resource and its rows; False when there is no such resource.

    Raises ResourceInUse when a connection has it as its Resource to Update.
    """

    def delete(con: duckdb.DuckDBPyConnection) -> bool:
        found = find_resource(con, resource_id)
        if found is None or found.account_id != account_id:
            return False
        users = con.execute(
            "SELECT name FROM connections WHERE resource_to_update = ? ORDER BY id",
            [resource_id],
        ).fetchall()
        if users:
            names = ", ".join(repr(str(u[0])) for u in users)
            raise ResourceInUse(
                f"resource {resource_id} is the Resource to Update of connection {names}; "
                "change the connection first"
            )
        con.execute(f"DELETE FROM {table_of(found.type)} WHERE resource_id = ?", [resource_id])
        con.execute("DELETE FROM resources WHERE id = ?", [resource_id])
        return True

    return store.transaction(delete)


def count_rows(con: duckdb.DuckDBPyConnection, rtype: ResourceType, resource_id: int) -> int:
    """Rows of one resource inside the caller's transaction."""
    row = one(
        con.execute(f"SELECT count(*) FROM {table_of(rtype)} WHERE resource_id = ?", [resource_id])
    )
    return int(row[0]) if row else 0


def _columns(rtype: ResourceType) -> str:
    return ", ".join(f'"{name}"' for name in property_names(rtype))


def _wire_row(rtype: ResourceType, values: Sequence[Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for prop, value in zip(PROPERTIES[rtype], values, strict=True):
        if value is None:
            continue
        row[prop.name] = json.loads(value) if prop.kind == "object" else value
    return row


def read_rows(
    con: duckdb.DuckDBPyConnection,
    rtype: ResourceType,
    resource_id: int,
    *,
    limit: int | None = None,
    offset: int = 0,
    where: str = "",
    params: Sequence[object] = (),
) -> list[dict[str, Any]]:
    """Rows of one resource in order, as JSON objects without null properties."""
    query = (
        f"SELECT {_columns(rtype)} FROM {table_of(rtype)} WHERE resource_id = ?{where} ORDER BY pos"
    )
    args: list[object] = [resource_id, *params]
    if limit is not None:
        query += " LIMIT ? OFFSET ?"
        args += [limit, page_offset(offset)]
    return [_wire_row(rtype, row) for row in con.execute(query, args).fetchall()]


def rows_csv(store: Store, resource: Resource) -> str:
    """The resource's rows as CSV text: one column per property, `properties` as JSON."""
    names = property_names(resource.type)
    rows = store.transaction(
        lambda con: con.execute(
            f"SELECT {_columns(resource.type)} FROM {table_of(resource.type)} "
            "WHERE resource_id = ? ORDER BY pos",
            [resource.id],
        ).fetchall()
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow(["" if value is None else _csv_value(value) for value in row])
    return out.getvalue()


#: First characters that make a spreadsheet read a cell as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_value(value: object) -> str:
    """A cell's text. Text that a spreadsheet would run as a formula (OWASP "CSV
    injection": `=HYPERLINK(...)` in a synced item name) gets a leading `'`, so it
    opens as text; numbers are written as they are."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return str(value)
