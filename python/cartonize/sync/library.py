"""Packing from the resource library: complete a pack request from the account's lists.

- `boxTypeSets: ["customer"]` (and no `boxTypes`): the box types are the rows of the
  account's cartons resource.
- An item set with a `refId` and no `dimensions`: completed from the account's items
  resource; fields the request gives win over the library's.
- Only an `orderId` (no item sets, no pre-packed boxes, not random): the item sets are
  that order's lines in the account's orders resource, each completed from the items
  resource. A request that carries pre-packed `boxes` packs them; the orderId is then
  only its label, as it is in every request without a key.

"The account's resource" of a type is the one marked default, else the newest. References
that cannot be resolved raise InvalidRequest (422) naming them. The request is completed
as JSON before validation, so the packer itself knows nothing of the library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb

from cartonize.errors import InvalidRequest
from cartonize.store import Store
from cartonize.sync.resources import ResourceType, library_resource, read_rows

__all__ = ["needs_account", "needs_library", "resolve_library"]

CUSTOMER = "customer"
_MAX_NAMED = 20


def _wants_customer_boxes(data: Mapping[str, Any]) -> bool:
    sets = data.get("boxTypeSets")
    return isinstance(sets, list) and CUSTOMER in sets and not data.get("boxTypes")


def _incomplete_item_sets(data: Mapping[str, Any]) -> list[int]:
    item_sets = data.get("itemSets")
    if not isinstance(item_sets, list):
        return []
    return [
        i
        for i, s in enumerate(item_sets)
        if isinstance(s, dict) and s.get("dimensions") is None and s.get("refId") is not None
    ]


def _wants_order(data: Mapping[str, Any]) -> bool:
    order_id = data.get("orderId")
    return (
        isinstance(order_id, str | int)
        and not isinstance(order_id, bool)
        and str(order_id) != ""
        and not data.get("itemSets")
        # Pre-packed boxes are what the request packs: an orderId beside them is a label.
        and not data.get("boxes")
        and not data.get("random")
    )


def needs_library(data: Mapping[str, Any]) -> bool:
    """Whether a request with a key would draw on the resource library."""
    return needs_account(data) or _wants_order(data)


def needs_account(data: Mapping[str, Any]) -> bool:
    """Whether the request cannot be packed without an account's library.

    An orderId alone is not such a reference: without a key it labels a request that
    packs nothing, as it did before the library existed.
    """
    return _wants_customer_boxes(data) or bool(_incomplete_item_sets(data))


def resolve_library(data: dict[str, Any], account_id: int, store: Store) -> dict[str, Any]:
    """The request with its library references replaced by the account's rows."""
    return store.transaction(lambda con: _resolve(con, dict(data), account_id))


def _resource_rows(
    con: duckdb.DuckDBPyConnection, account_id: int, rtype: ResourceType, what: str
) -> list[dict[str, Any]]:
    resource_id = library_resource(con, account_id, rtype)
    if resource_id is None:
        raise InvalidRequest(details=f"{what}: the account has no {rtype} resource")
    return read_rows(con, rtype, resource_id)


def _resolve(
    con: duckdb.DuckDBPyConnection, data: dict[str, Any], account_id: int
) -> dict[str, Any]:
    if _wants_customer_boxes(data):
        rows = _resource_rows(con, account_id, "cartons", "boxTypeSets: customer")
        if not rows:
            raise InvalidRequest(details="boxTypeSets: customer: the cartons resource is empty")
        data["boxTypes"] = [_box_type(row) for row in rows]
        # Resolved here, so the packer must not report it as an unused field.
        data["boxTypeSets"] = [s for s in data["boxTypeSets"] if s != CUSTOMER]
        if not data["boxTypeSets"]:
            del data["boxTypeSets"]
    if _wants_order(data):
        order_id = str(data["orderId"])
        lines = _resource_rows(con, account_id, "orders", f"orderId {order_id!r}")
        mine = [line for line in lines if line["orderId"] == order_id]
        if not mine:
            raise InvalidRequest(
                details=f"orderId: no lines of order {order_id!r} in the orders resource"
            )
        data["itemSets"] = [_order_line(line) for line in mine]
    wanted = _incomplete_item_sets(data)
    if wanted:
        rows = _resource_rows(con, account_id, "items", "itemSets")
        by_ref = {str(row["refId"]): row for row in rows}
        item_sets = list(data["itemSets"])
        missing: list[str] = []
        for index in wanted:
            given = item_sets[index]
            ref = _ref_text(given["refId"])
            row = by_ref.get(ref)
            if row is None:
                missing.append(f"itemSets[{index}].refId {ref}")
                continue
            item_sets[index] = {
                **_item_set(row),
                **{k: v for k, v in given.items() if v is not None},
            }
            if given.get("refId") is not None and not isinstance(given["refId"], int):
                # The library's refId may be text; the pack API's refId is an integer.
                item_sets[index]["refId"] = _int_or_none(ref)
                if item_sets[index]["refId"] is None and given.get("name") is None:
                    # So the text SKU travels as the name, the items list's own name
                    # giving way: the answer must say which SKU each unit is.
                    item_sets[index]["name"] = ref
        if missing:
            shown = ", ".join(missing[:_MAX_NAMED])
            more = f" and {len(missing) - _MAX_NAMED} more" if len(missing) > _MAX_NAMED else ""
            raise InvalidRequest(details=f"not in the account's items resource: {shown}{more}")
        data["itemSets"] = item_sets
    return data


def _ref_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _point(row: Mapping[str, Any], prefix: str) -> dict[str, float] | None:
    axes: list[float] = [row[key] for key in (f"{prefix}_{a}" for a in "xyz") if key in row]
    return dict(zip("xyz", axes, strict=True)) if len(axes) == 3 else None


def _box_type(row: Mapping[str, Any]) -> dict[str, Any]:
    box: dict[str, Any] = {
        "refId": _int_or_none(str(row["refId"])),
        "name": row.get("name") or str(row["refId"]),
        "dimensions": _point(row, "dimensions"),
        "weightMax": row["weightMax"],
    }
    for key in ("weightTare", "price", "properties"):
        if row.get(key) is not None:
            box[key] = row[key]
    outer = _point(row, "outer_dimensions")
    if outer is not None:
        box["outer"] = {"dimensions": outer}
    return box


def _item_set(row: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {
        "refId": _int_or_none(str(row["refId"])),
        "dimensions": _point(row, "dimensions"),
        # The items list may leave weight out; the pack API requires one.
        "weight": row.get("weight", 0.0),
    }
    for key in ("name", "color", "sequence", "properties"):
        if row.get(key) is not None:
            item[key] = row[key]
    if item["refId"] is None and "name" not in item:
        item["name"] = str(row["refId"])
    return item


def _order_line(line: Mapping[str, Any]) -> dict[str, Any]:
    ref = str(line["refId"])
    item: dict[str, Any] = {"refId": _int_or_none(ref), "quantity": line["quantity"]}
    if item["refId"] is None:
        # A text refId cannot travel as the pack API's integer refId: look it up by name.
        item["refId"] = ref
    for key in ("sequence", "properties"):
        if line.get(key) is not None:
            item[key] = line[key]
    return item
