"""The sync REST API: every rule, every error row, conversions, row_key forms, atomicity."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cartonize.store import Store
from cartonize.sync.connections import read_log

from tests.api.library_setup import ITEM_MAP, Plan, item, make_plan

#: An array nested past Python's recursion limit.
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def plan(store: Store) -> Plan:
    return make_plan(store)


def updating(
    plan: Plan, rows: list[Any] | None = None, **fields: Any
) -> tuple[dict[str, Any], int]:
    """A connection with a Resource to Update holding `rows` (created by a first POST)."""
    creator = plan.create_connection(name="creator")
    made = plan.write("POST", creator, {"payload": rows or [item(1), item(2)]})
    resource_id = made.json["packResourceId"]
    connection = plan.create_connection(resourceToUpdate=resource_id, **fields)
    return connection, resource_id


# --------------------------------------------------------------------------- rules


def test_rule_1_post_without_resource_to_update_creates_a_resource(plan: Plan) -> None:
    connection = plan.create_connection(newResourceBaseName="Feed")
    result = plan.write("POST", connection, {"payload": [item("A", title="a"), item("B")]})
    assert result.status_code == 200
    body = result.json
    assert body["status"] == "success"
    assert isinstance(body["packResourceId"], int)
    assert (body["received"], body["inserted"]) == (2, 2)
    rows = plan.rows(body["packResourceId"])
    assert [r["refId"] for r in rows] == ["A", "B"]
    assert rows[0] == {
        "refId": "A",
        "dimensions_x": 1.0,
        "dimensions_y": 2.0,
        "dimensions_z": 3.0,
        "weight": 1.0,
        "name": "a",
    }
    second = plan.write("POST", connection, {"payload": item("C")})
    assert second.json["packResourceId"] != body["packResourceId"]
    listed = plan.client.simulate_get("/resources", headers=plan.auth).json["resources"]
    assert all(r["name"].startswith("Feed ") for r in listed)


def test_rule_2_post_with_resource_to_update_upserts(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    result = plan.write(
        "POST", connection, {"payload": [item(2, mass=9), item(3)], "row_key": ["refId"]}
    )
    assert result.json["status"] == "success"
    assert result.json["packResourceId"] == resource_id
    assert (result.json["inserted"], result.json["updated"]) == (1, 1)
    assert [(r["refId"], r["weight"]) for r in plan.rows(resource_id)] == [
        ("1", 1.0),
        ("2", 9.0),
        ("3", 1.0),
    ]


def test_rule_3_put_replaces_every_row(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    result = plan.write("PUT", connection, {"payload": [item(7), item(8), item(9)]})
    assert result.json == {
        "status": "success",
        "received": 3,
        "inserted": 3,
        "updated": 0,
        "unchanged": 0,
        "rejected": 0,
    }
    assert [r["refId"] for r in plan.rows(resource_id)] == ["7", "8", "9"]


def test_a_put_whose_every_record_is_rejected_fails_and_keeps_the_rows(plan: Plan) -> None:
    # It emptied the resource and answered success (pulls were already guarded). A failure
    # is 200 with status failure, as the spec's write table answers every failed write.
    connection, resource_id = updating(plan)
    before = plan.rows(resource_id)
    payload = [item("Z", mass="heavy"), item("Q", h="tall")]
    result = plan.write("PUT", connection, {"payload": payload})
    assert result.status_code == 200
    body = result.json
    assert (body["status"], body["received"], body["rejected"]) == ("failure", 2, 2)
    assert body["message"] == (
        "none of the 2 records could be used, so nothing was written: "
        'record 0 (refId "Z"): rejected: weight (mass): "heavy" is not a number; '
        'record 1 (refId "Q"): rejected: dimensions_x (size.h): "tall" is not a number'
    )
    assert plan.rows(resource_id) == before
    entry = plan.log(connection)[0]
    assert (entry["status"], entry["rejected"]) == ("failure", 2)
    assert entry["messages"][1:] == [
        'record 0 (refId "Z"): rejected: weight (mass): "heavy" is not a number',
        'record 1 (refId "Q"): rejected: dimensions_x (size.h): "tall" is not a number',
    ]
    # One usable record is an overwrite as before; an empty array still empties.
    mixed = plan.write("PUT", connection, {"payload": [item("Z", mass="heavy"), item("K")]})
    assert (mixed.status_code, mixed.json["status"], mixed.json["inserted"]) == (200, "success", 1)
    assert [r["refId"] for r in plan.rows(resource_id)] == ["K"]


@pytest.mark.parametrize("method", ["PUT", "PATCH", "POST"])
def test_a_failed_write_into_the_resource_to_update_is_logged_against_it(
    plan: Plan, method: str
) -> None:
    # The log entry of a PUT refused for incomplete rows said resourceId null, so the log
    # (and the console's link) did not say which resource the write was for.
    connection, resource_id = updating(plan)
    incomplete = {"sku": 9, "size": {"h": 1, "w": 2}}  # no length: dimensions_z missing
    result = plan.write(method, connection, {"payload": [incomplete, item(3)]})
    assert result.json["status"] == "failure"
    assert result.json.get("packResourceId") is None  # the answer names no resource
    entry = plan.log(connection)[0]
    assert (entry["trigger"], entry["status"]) == (f"rest {method}", "failure")
    assert entry["messages"] == [
        'rows are incomplete: record 0 (refId "9"): missing required dimensions_z'
    ]
    assert entry["resourceId"] == resource_id
    assert [r["refId"] for r in plan.rows(resource_id)] == ["1", "2"]


def test_rule_3_put_needs_an_array_and_a_resource_to_update(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    single = plan.write("PUT", connection, {"payload": item(7)})
    assert single.json["status"] == "failure"
    assert [r["refId"] for r in plan.rows(resource_id)] == ["1", "2"]
    blank = plan.create_connection(name="blank")
    for method in ("PUT", "PATCH"):
        result = plan.write(method, blank, {"payload": [item(1)]})
        assert result.status_code == 200
        assert result.json["status"] == "failure"
        assert "packResourceId" not in result.json
        assert "Resource to Update" in plan.log(blank)[0]["messages"][0]


def test_rule_4_patch_with_row_key_merges_and_inserts(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    partial = {"sku": 1, "title": "renamed"}  # a matching row may be partial (rule 6)
    result = plan.write("PATCH", connection, {"payload": [partial, item(4)], "row_key": ["refId"]})
    assert result.json["status"] == "success"
    rows = plan.rows(resource_id)
    assert rows[0] == {
        "refId": "1",
        "dimensions_x": 1.0,
        "dimensions_y": 2.0,
        "dimensions_z": 3.0,
        "weight": 1.0,
        "name": "renamed",
    }
    assert [r["refId"] for r in rows] == ["1", "2", "4"]


def test_a_partial_upsert_keeps_properties_keys_it_does_not_set(plan: Plan) -> None:
    # Keys with non-ASCII names (and others escaped differently by polars and json.dumps)
    # were stored as explicit nulls, and the merge then deleted them from existing rows.
    keys = {"größe": "g", 'q"uote': "q", "emoji😀": "e", "plain": "p"}
    smap = {**ITEM_MAP, **{f"properties.{key}": field for key, field in keys.items()}}
    creator = plan.create_connection(name="creator", schemaMap=smap)
    made = plan.write("POST", creator, {"payload": [item("A", g="XL", q="1", e="y", p="x")]})
    resource_id = made.json["packResourceId"]
    connection = plan.create_connection(resourceToUpdate=resource_id, schemaMap=smap)
    result = plan.write(
        "PATCH",
        connection,
        {"payload": [{"sku": "A", "p": "changed"}, item("B", g="M")], "row_key": "refId"},
    )
    assert (result.json["updated"], result.json["inserted"]) == (1, 1)
    rows = {row["refId"]: row for row in plan.rows(resource_id)}
    assert rows["A"]["properties"] == {
        "größe": "XL",
        'q"uote': "1",
        "emoji😀": "y",
        "plain": "changed",
    }
    assert rows["B"]["properties"] == {"größe": "M"}


def test_an_upsert_never_deletes_nested_properties_it_gives_as_null(plan: Plan) -> None:
    # Only nulls at the top of the object were left out; a nested one was stored, and the
    # merge (DuckDB's json_merge_patch is RFC 7396, recursive) deleted the stored key. An
    # object whose members are all null is absent too: `{}` would replace a stored scalar.
    smap = {**ITEM_MAP, "properties": "meta", "properties.box": "box"}
    creator = plan.create_connection(name="creator", schemaMap=smap)
    stored = {"dims": {"a": 1, "b": {"c": 2, "d": 3}}, "look": "red", "tags": [1, None]}
    made = plan.write("POST", creator, {"payload": [item("A", meta=stored, box={"w": 1})]})
    resource_id = made.json["packResourceId"]
    connection = plan.create_connection(resourceToUpdate=resource_id, schemaMap=smap)
    patch = {
        "dims": {"a": None, "b": {"c": None, "e": 4}},
        "look": {"shade": None},
        "tags": [None],  # arrays are values: replaced whole, nulls inside kept
    }
    payload = [
        {"sku": "A", "meta": patch, "box": {"w": None}},
        item("B", meta={"x": {"y": None}, "z": 1}, box={"w": None, "h": 2}),
    ]
    result = plan.write("PATCH", connection, {"payload": payload, "row_key": "refId"})
    assert (result.json["updated"], result.json["inserted"]) == (1, 1)
    rows = {row["refId"]: row for row in plan.rows(resource_id)}
    assert rows["A"]["properties"] == {
        "dims": {"a": 1, "b": {"c": 2, "d": 3, "e": 4}},
        "look": "red",
        "tags": [None],
        "box": {"w": 1},
    }
    # Inserted rows leave the nulls out as well, so both kinds of row read alike.
    assert rows["B"]["properties"] == {"z": 1, "box": {"h": 2}}


def test_rule_4_patch_without_row_key_appends_without_deduplication(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    result = plan.write("PATCH", connection, {"payload": [item(1), item(1)]})
    assert (result.json["status"], result.json["inserted"]) == ("success", 2)
    assert [r["refId"] for r in plan.rows(resource_id)] == ["1", "2", "1", "1"]


def test_rule_6_an_inserted_row_must_be_complete_and_the_write_is_atomic(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    before = plan.rows(resource_id)
    payload = [item(1, mass=50), {"sku": 99, "mass": 2}]  # 99 matches nothing and has no size
    result = plan.write("PATCH", connection, {"payload": payload, "row_key": "refId"})
    assert result.json["status"] == "failure"
    assert plan.rows(resource_id) == before  # the update of row 1 was rolled back too
    entry = plan.log(connection)[0]
    assert (entry["status"], entry["trigger"], entry["received"]) == ("failure", "rest PATCH", 2)
    assert 'records 1 (refId "99") match no existing row' in entry["messages"][0]


def test_an_incomplete_row_is_named_by_its_sku_and_position(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    payload = [item("K"), {"sku": "NO-SIZE", "mass": 1}, {"title": "no sku", "mass": 2}]
    result = plan.write("PUT", connection, {"payload": payload})
    assert result.json["status"] == "failure"
    assert [r["refId"] for r in plan.rows(resource_id)] == ["1", "2"]
    assert plan.log(connection)[0]["messages"][0] == (
        'rows are incomplete: record 1 (refId "NO-SIZE"): missing required dimensions_x, '
        "dimensions_y, dimensions_z; record 2: missing required refId, dimensions_x, "
        "dimensions_y, dimensions_z"
    )


def test_rule_7_conversions_apply_after_mapping_by_parameter_or_header(plan: Plan) -> None:
    connection = plan.create_connection()
    by_param = plan.write(
        "POST",
        connection,
        {"payload": [item(1, h=254, mass=453.59237)]},
        params={"dim_conv": "mm_to_in", "weight_conv": "gr_to_lb"},
    )
    row = plan.rows(by_param.json["packResourceId"])[0]
    assert row["dimensions_x"] == pytest.approx(10.0)
    assert row["weight"] == pytest.approx(1.0)
    by_header = plan.write(
        "POST",
        connection,
        {"payload": [item(1, h=2, mass=2)]},
        headers={"X-Service-Dim-Conv": "in_to_mm", "X-Service-Weight-Conv": "lb_to_gr"},
    )
    row = plan.rows(by_header.json["packResourceId"])[0]
    assert row["dimensions_x"] == pytest.approx(50.8)
    assert row["weight"] == pytest.approx(907.18474)


def test_an_unknown_conversion_fails_the_write(plan: Plan) -> None:
    connection = plan.create_connection()
    result = plan.write("POST", connection, {"payload": [item(1)]}, params={"dim_conv": "cm"})
    assert (result.json["status"], result.json["packResourceId"]) == ("failure", None)
    assert "dim_conv must be one of" in plan.log(connection)[0]["messages"][0]


def test_duplicate_keys_in_one_payload_keep_the_last_and_the_log_says_so(plan: Plan) -> None:
    connection, resource_id = updating(plan)
    payload = [item(5, mass=1), item(5, mass=2), item(5, mass=3), item(1, mass=1)]
    result = plan.write("PATCH", connection, {"payload": payload, "row_key": ["refId"]})
    body = result.json
    # The two dropped records count as unchanged (rule of the answer's counts).
    assert (body["inserted"], body["updated"], body["unchanged"]) == (1, 0, 3)
    assert [(r["refId"], r["weight"]) for r in plan.rows(resource_id)][-1] == ("5", 3.0)
    assert "2 records had a row_key seen later" in plan.log(connection)[0]["messages"][0]


@pytest.mark.parametrize(
    ("stored", "payload", "counts"),
    [
        # (inserted, updated, unchanged, rejected); "1" and "2" are stored by `updating`.
        # A record matching two rows (appends keep duplicates) is one record updated: it
        # was counted twice, and unchanged (received - inserted - updated) went to -1.
        (["D", "D"], [item("D", mass=9)], (0, 1, 0, 0)),
        (["D", "D"], [item("D")], (0, 0, 1, 0)),
        # A duplicate dropped for a later record counted nowhere.
        ([], [item(1, mass=5), item(1, mass=6), item(3)], (1, 1, 1, 0)),
        ([], [item(1), item(1), item(1)], (0, 0, 3, 0)),
        ([], [item(7), item(None), item(7, mass="heavy"), item(8)], (2, 0, 0, 2)),
    ],
)
def test_upsert_counts_add_up_to_the_records_received(
    plan: Plan, stored: list[str], payload: list[Any], counts: tuple[int, int, int, int]
) -> None:
    connection, _ = updating(plan)
    if stored:
        appended = plan.write("PATCH", connection, {"payload": [item(s) for s in stored]})
        assert appended.json["status"] == "success"
    body = plan.write("PATCH", connection, {"payload": payload, "row_key": "refId"}).json
    got = (body["inserted"], body["updated"], body["unchanged"], body["rejected"])
    assert got == counts
    assert sum(got) == body["received"] == len(payload)
    assert plan.log(connection)[0]["unchanged"] == counts[2]


def test_values_that_do_not_cast_are_rejected_and_counted(plan: Plan) -> None:
    connection = plan.create_connection()
    result = plan.write("POST", connection, {"payload": [item(1), item(2, mass="heavy")]})
    body = result.json
    assert (body["status"], body["inserted"], body["rejected"]) == ("success", 1, 1)
    entry = plan.log(connection)[0]
    assert entry["rejected"] == 1
    assert entry["messages"] == [
        'record 1 (refId "2"): rejected: weight (mass): "heavy" is not a number'
    ]


@pytest.mark.parametrize("number", ["NaN", "1e400", "-Infinity"])
def test_a_non_finite_number_in_properties_rejects_its_record(plan: Plan, number: str) -> None:
    # It was a 500 with no log entry: JSON text cannot hold it, so encoding raised.
    connection = plan.create_connection()
    bad, good = item("X", look={"colour": 0}), item("Y", look={"colour": "red"})
    raw = json.dumps({"payload": [bad, good]}).replace('"colour": 0', f'"colour": {number}')
    result = plan.client.simulate_request(
        "POST",
        f"/sync-api/{connection['publicApiId']}/rest",
        body=raw,
        headers={"X-Service-API-Secret": connection["apiSecret"]},
    )
    assert result.status_code == 200
    body = result.json
    assert (body["status"], body["inserted"], body["rejected"]) == ("success", 1, 1)
    (entry,) = plan.log(connection)
    assert entry["rejected"] == 1
    assert entry["messages"][0].startswith(
        'record 0 (refId "X"): rejected: properties.color (look.colour): '
    )


def test_a_payload_given_as_json_text_is_parsed(plan: Plan) -> None:
    connection = plan.create_connection()
    result = plan.write("POST", connection, {"payload": json.dumps([item(1)])})
    assert result.json["status"] == "success"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize(
    ("raw", "path"),
    [
        (
            b'{"payload": [REC, {"sku": "A", "sku": "B", "size": SIZE, "mass": 1}]}',
            "payload[1].sku",
        ),
        (
            b'{"payload": [{"sku": "A", "size": {"h": 1, "w": 2, "l": 3, "h": 9}, "mass": 1}]}',
            "payload[0].size.h",
        ),
        (b'{"payload": [REC], "row_key": "refId", "row_key": "name"}', "row_key"),
        (b'{"payload": [REC], "payload": [{"sku": "Z", "size": SIZE, "mass": 1}]}', "payload"),
        (b'{"payload": "[{\\"sku\\": \\"A\\", \\"sku\\": 1, \\"mass\\": 1}]"}', "payload[0].sku"),
        # true is not 1, whatever Python's == says.
        (b'{"payload": [{"sku": "A", "size": SIZE, "mass": 1, "mass": true}]}', "payload[0].mass"),
    ],
)
def test_a_body_repeating_a_key_with_different_values_is_refused_with_422(
    plan: Plan, method: str, raw: bytes, path: str
) -> None:
    """`{"sku": "A", "sku": "B"}` was written as B (Python's json keeps the last value
    silently); which one the client meant is not clear, so nothing is written."""
    connection, resource_id = updating(plan)
    before = plan.rows(resource_id)
    raw = raw.replace(b"REC", json.dumps(item("R")).encode())
    raw = raw.replace(b"SIZE", b'{"h": 1, "w": 2, "l": 3}')
    result = plan.client.simulate_request(
        method,
        f"/sync-api/{connection['publicApiId']}/rest",
        body=raw,
        headers={"X-Service-API-Secret": connection["apiSecret"]},
    )
    assert result.status_code == 422, result.text
    assert result.json["error"] == "Repeated JSON key"
    assert result.json["details"].startswith(json.dumps(path) + " is named more than once")
    assert result.json["details"].endswith("send each key once in an object")
    assert plan.rows(resource_id) == before
    listed = plan.client.simulate_get("/resources", headers=plan.auth).json["resources"]
    assert len(listed) == 1


def test_a_key_repeated_with_one_value_is_taken(plan: Plan) -> None:
    connection = plan.create_connection()
    result = plan.client.simulate_post(
        f"/sync-api/{connection['publicApiId']}/rest",
        body=b'{"payload": [{"sku": "A", "sku": "A", "size": {"h": 1, "w": 2, "l": 3},'
        b' "mass": 1, "mass": 1.0}], "payload": [{"sku": "A", "sku": "A", "size": {"h": 1,'
        b' "w": 2, "l": 3}, "mass": 1, "mass": 1.0}]}',
        headers={"X-Service-API-Secret": connection["apiSecret"]},
    )
    assert result.json["status"] == "success", result.text
    assert [r["refId"] for r in plan.rows(result.json["packResourceId"])] == ["A"]


def test_keys_differing_only_in_lone_surrogates_are_a_repeated_key(plan: Plan) -> None:
    # Both became U+FFFD after the repeat check had seen two keys, so the record was
    # stored with the last value, silently.
    connection = plan.create_connection(schemaMap={**ITEM_MAP, "properties.note": "note\ufffd"})
    record = '{"sku": "A", "size": {"h": 1, "w": 2, "l": 3}, "mass": 1, '
    url = f"/sync-api/{connection['publicApiId']}/rest"
    secret = {"X-Service-API-Secret": connection["apiSecret"]}
    two = '{"payload": [' + record + '"note\\ud800": "x", "note\\udbff": "y"}]}'
    result = plan.client.simulate_post(url, body=two.encode(), headers=secret)
    assert result.status_code == 422, result.text
    assert result.json["error"] == "Repeated JSON key"
    assert result.json["details"] == (
        '"payload[0].note\\ufffd" is named more than once, with different values ("x", '
        '"y") (a lone surrogate in a key is read as U+FFFD, so keys that differ only in '
        "their lone surrogates are one key): which value is meant is not clear, so nothing "
        "was written; send each key once in an object"
    )
    assert plan.client.simulate_get("/resources", headers=plan.auth).json["resources"] == []
    # One value under both: one key, as any repeat of one value.
    one = '{"payload": [' + record + '"note\\ud800": "x", "note\\udbff": "x"}]}'
    same = plan.client.simulate_post(url, body=one.encode(), headers=secret)
    assert same.json["status"] == "success", same.text
    (row,) = plan.rows(same.json["packResourceId"])
    assert row["properties"] == {"note": "x"}


# --------------------------------------------------------------------------- row_key forms


def test_a_lone_surrogate_in_a_payload_becomes_a_replacement_character(plan: Plan) -> None:
    # It is no Unicode text: writing the row raised (a 500). The payload is read as
    # leniently as NaN is, so the row is kept with U+FFFD in its place.
    connection = plan.create_connection()
    result = plan.client.simulate_post(
        f"/sync-api/{connection['publicApiId']}/rest",
        body=b'{"payload": [{"sku": "A\\ud800", "size": {"h": 1, "w": 2, "l": 3}, "mass": 1,'
        b' "title": "box \\ud83d\\udce6"}]}',
        headers={"X-Service-API-Secret": connection["apiSecret"]},
    )
    assert result.json["status"] == "success", result.text
    rows = plan.rows(result.json["packResourceId"])
    assert [(r["refId"], r["name"]) for r in rows] == [("A\ufffd", "box \U0001f4e6")]


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("body", ["refId"]),
        ("body", "refId"),
        ("param", "refId"),
        ("param", '["refId"]'),
        ("header", "refId"),
        ("header", '["refId"]'),
    ],
)
def test_row_key_is_read_from_body_parameter_or_header(plan: Plan, where: str, value: Any) -> None:
    connection, resource_id = updating(plan)
    body: dict[str, Any] = {"payload": [item(2, mass=7)]}
    params, headers = {}, {}
    if where == "body":
        body["row_key"] = value
    elif where == "param":
        params["row_key"] = value
    else:
        headers["X-Service-Sync-Row-Key"] = value
    result = plan.write("PATCH", connection, body, params=params, headers=headers)
    assert (result.json["status"], result.json["updated"]) == ("success", 1)
    assert [r["refId"] for r in plan.rows(resource_id)] == ["1", "2"]


def test_a_composite_row_key_matches_on_every_property(plan: Plan) -> None:
    connection, resource_id = updating(plan, rows=[item(1, title="a"), item(1, title="b")])
    payload = [{"sku": 1, "title": "b", "mass": 5}]
    result = plan.write("PATCH", connection, {"payload": payload, "row_key": ["refId", "name"]})
    assert result.json["updated"] == 1
    assert [r["weight"] for r in plan.rows(resource_id)] == [1.0, 5.0]


@pytest.mark.parametrize(
    ("row_key", "message"),
    [(["id"], "row_key 'id' is not a property"), (["color"], "not mapped by the connection")],
)
def test_row_key_must_name_mapped_properties(plan: Plan, row_key: list[str], message: str) -> None:
    connection, _ = updating(plan)
    result = plan.write("PATCH", connection, {"payload": [item(1)], "row_key": row_key})
    assert result.json["status"] == "failure"
    assert message in plan.log(connection)[0]["messages"][0]


# --------------------------------------------------------------------------- error rows


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[]",
        b'{"rows": []}',
        b'{"payload": 3}',
        b'{"payload": [1, 2]}',
        b'{"payload": "{not json"}',
        # Nested past Python's recursion limit: RecursionError, which was a 500.
        DEEP.encode(),
        b'{"payload": ' + json.dumps(DEEP).encode() + b"}",
    ],
)
def test_invalid_payloads_answer_400(plan: Plan, raw: bytes) -> None:
    connection = plan.create_connection()
    result = plan.client.simulate_post(
        f"/sync-api/{connection['publicApiId']}/rest",
        body=raw,
        headers={"X-Service-API-Secret": connection["apiSecret"]},
    )
    assert result.status_code == 400
    assert result.json == {"error": "Invalid JSON payload"}


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("body", 3),
        ("body", {"a": 1}),
        ("body", [1]),
        ("param", '{"a": 1}'),
        ("param", "[1]"),
        ("header", "[not json"),
        ("body", []),
        ("param", DEEP),
        ("header", "[" * 5000 + "]" * 5000),
    ],
)
def test_invalid_row_keys_answer_400(plan: Plan, where: str, value: Any) -> None:
    connection, _ = updating(plan)
    body: dict[str, Any] = {"payload": [item(1)]}
    params, headers = {}, {}
    if where == "body":
        body["row_key"] = value
    elif where == "param":
        params["row_key"] = value
    else:
        headers["X-Service-Sync-Row-Key"] = value
    result = plan.write("PATCH", connection, body, params=params, headers=headers)
    assert result.status_code == 400
    assert result.json == {"error": "Invalid row_key format"}


def test_the_secret_is_accepted_as_header_or_parameter_and_checked(plan: Plan) -> None:
    first = plan.create_connection()
    other = plan.create_connection(name="other")
    url = f"/sync-api/{first['publicApiId']}/rest"
    body = {"payload": [item(1)]}
    ok = plan.client.simulate_post(
        url, json=body, params={"service_api_secret": first["apiSecret"]}
    )
    assert ok.json["status"] == "success"
    for headers, params in [
        ({}, {}),
        ({"X-Service-API-Secret": "wrong"}, {}),
        ({"X-Service-API-Secret": other["apiSecret"]}, {}),  # another connection's secret
        ({}, {"service_api_secret": first["apiSecret"][:10]}),
    ]:
        result = plan.client.simulate_post(url, json=body, headers=headers, params=params)
        assert result.status_code == 401
        assert result.json["error"] == "Unauthorized"
    unknown = plan.client.simulate_post(
        "/sync-api/nope/rest", json=body, headers={"X-Service-API-Secret": first["apiSecret"]}
    )
    assert (unknown.status_code, unknown.json["error"]) == (401, "Unauthorized")


def test_unauthenticated_requests_learn_nothing_about_the_body(plan: Plan) -> None:
    connection = plan.create_connection()
    result = plan.client.simulate_post(
        f"/sync-api/{connection['publicApiId']}/rest", body=b"not json"
    )
    assert (result.status_code, result.json["error"]) == (401, "Unauthorized")


def test_regenerating_the_secret_invalidates_the_old_one_at_once(plan: Plan) -> None:
    connection = plan.create_connection()
    regenerated = plan.client.simulate_post(
        f"/plans/{plan.plan_id}/connections/{connection['id']}/credentials", headers=plan.auth
    ).json
    assert regenerated["apiSecret"] != connection["apiSecret"]
    assert regenerated["apiSecretStem"] == regenerated["apiSecret"][:10]
    old = plan.write("POST", connection, {"payload": [item(1)]})
    assert old.status_code == 401
    new = plan.write(
        "POST", {**connection, "apiSecret": regenerated["apiSecret"]}, {"payload": [item(1)]}
    )
    assert new.json["status"] == "success"


def test_a_downgraded_account_cannot_write(plan: Plan) -> None:
    connection = plan.create_connection()
    plan.store.set_tier("acme", "free")
    result = plan.write("POST", connection, {"payload": [item(1)]})
    assert (result.status_code, result.json["error"]) == (403, "Forbidden")


def test_every_write_is_logged_with_its_counts(plan: Plan) -> None:
    connection, _ = updating(plan)
    plan.write(
        "PATCH", connection, {"payload": [item(1), item(2, mass=3), item(3)], "row_key": ["refId"]}
    )
    plan.write("PUT", connection, {"payload": [item(1)]})
    log = plan.log(connection)
    assert [(e["trigger"], e["status"]) for e in log] == [
        ("rest PUT", "success"),
        ("rest PATCH", "success"),
    ]
    patch = log[1]
    assert {k: patch[k] for k in ("received", "inserted", "updated", "unchanged", "rejected")} == {
        "received": 3,
        "inserted": 1,
        "updated": 1,
        "unchanged": 1,
        "rejected": 0,
    }
    assert ITEM_MAP  # the map the log's counts refer to


# --------------------------------------------------------------------------- edits meanwhile


#: Edits of the connection injected between a REST write's secret check (and mapping) and
#: its write, made through the management API; the answer each write then gets.
EDITS_DURING_A_WRITE = {
    "retarget": (409, "Resource to Update"),
    "set target": (409, "Resource to Update"),
    "schema map": (409, "Schema Map"),
    "conversion": (409, "Unit Conversion"),
    "resource type": (409, "Resource Type, Resource to Update, Schema Map"),
    "regenerate secret": (401, None),
    "delete": (401, None),
    "downgrade": (403, None),
}


def _edit_connection(plan: Plan, url: str, edit: str, changes: dict[str, Any]) -> None:
    """Makes `edit` to the connection at `url` (one of EDITS_DURING_A_WRITE), committed
    at once: a secret regenerated, the connection deleted, the account downgraded, or
    `changes` patched in."""
    if edit == "regenerate secret":
        done = plan.client.simulate_post(f"{url}/credentials", headers=plan.auth)
    elif edit == "delete":
        done = plan.client.simulate_delete(url, headers=plan.auth)
    elif edit == "downgrade":
        plan.store.set_tier("acme", "free")
        done = None
    else:
        done = plan.client.simulate_patch(url, json=changes, headers=plan.auth)
    assert done is None or done.status_code in (200, 204), done.text


@pytest.mark.parametrize(
    ("edit", "method"),
    [
        (edit, method)
        for edit in EDITS_DURING_A_WRITE
        for method in ("POST", "PUT", "PATCH")
        # PUT and PATCH need a Resource to Update.
        if edit != "set target" or method == "POST"
    ],
)
def test_a_connection_edited_while_a_rest_write_is_prepared_gets_no_write(
    plan: Plan, monkeypatch: pytest.MonkeyPatch, edit: str, method: str
) -> None:
    """The secret check read the connection, the payload was mapped with its schema map
    and conversions for its Resource to Update, and the write went there even when the
    connection had been edited meanwhile (a large payload maps for a good part of a
    second): the old list got the rows of a write meant for the new settings, or the new
    list rows mapped with the old map. The write's transaction now reads the connection
    again and writes nothing when what it was prepared with changed. The edit is injected
    deterministically between mapping and write."""
    import api.sync

    # A connection with a Resource to Update (blank for "set target": POST creates).
    first = plan.write("POST", plan.create_connection(name="a"), {"payload": [item("a-1")]})
    chosen = plan.write("POST", plan.create_connection(name="b"), {"payload": [item("keep")]})
    first_id, chosen_id = first.json["packResourceId"], chosen.json["packResourceId"]
    target = None if edit == "set target" else first_id
    connection = plan.create_connection(resourceToUpdate=target, dimConv="in_to_mm")
    url = f"/plans/{plan.plan_id}/connections/{connection['id']}"
    changes: dict[str, Any] = {
        "retarget": {"resourceToUpdate": chosen_id},
        "set target": {"resourceToUpdate": chosen_id},
        "schema map": {"schemaMap": {**ITEM_MAP, "name": "label"}},
        "conversion": {"dimConv": "mm_to_in"},
        "resource type": {"resourceType": "cartons", "resourceToUpdate": None, "schemaMap": {}},
    }.get(edit, {})
    resources_before = plan.client.simulate_get("/resources", headers=plan.auth).json
    rows_before = {rid: plan.rows(rid) for rid in (first_id, chosen_id)}
    real_write = api.sync.write_batch
    edited: list[int] = []

    def edit_then_write(*args: Any, **kwargs: Any) -> Any:
        # Authenticated and mapped; the edit commits before the write's transaction.
        _edit_connection(plan, url, edit, changes)
        edited.append(1)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(api.sync, "write_batch", edit_then_write)
    body = {"payload": [item("new-1"), item("new-2")], "row_key": ["refId"]}
    result = plan.write(method, connection, body)
    assert edited == [1]
    status, named = EDITS_DURING_A_WRITE[edit]
    assert result.status_code == status, result.text
    # Nothing was written anywhere: no list changed, none was created.
    if edit == "downgrade":
        plan.store.set_tier("acme", "premium")
    assert plan.client.simulate_get("/resources", headers=plan.auth).json == resources_before
    assert {rid: plan.rows(rid) for rid in (first_id, chosen_id)} == rows_before
    if status == 409:
        assert result.json["error"] == "Connection changed"
        assert result.json["details"] == (
            f"the connection changed while this write was being prepared ({named}), so "
            "nothing was written; send it again to write with the connection's current "
            "settings"
        )
        (entry,) = plan.log(connection)
        assert (entry["trigger"], entry["status"], entry["inserted"]) == (
            f"rest {method}",
            "failure",
            0,
        )
        assert entry["messages"][0] == result.json["details"]
        if edit != "resource type":  # (an items payload, a cartons connection now)
            # Sent again, it is written with the new settings.
            again = plan.write(method, connection, body)
            assert (again.status_code, again.json["status"]) == (200, "success"), again.text
    else:
        assert result.json["error"] == ("Forbidden" if status == 403 else "Unauthorized")


#: Edits injected while a REST write that is refused before writing is prepared, and the
#: answer each then gets: every record rejected (judged with the Schema Map and for the
#: Resource to Update the edit replaced: 409, as for a write), or a bad conversion
#: parameter (refused whatever the settings: only the secret, the connection and the
#: plan change its answer).
EDITS_DURING_A_REFUSAL = {
    ("rejected", "retarget"): (409, "Resource to Update"),
    ("rejected", "schema map"): (409, "Schema Map"),
    ("rejected", "regenerate secret"): (401, None),
    ("rejected", "delete"): (401, None),
    ("rejected", "downgrade"): (403, None),
    ("bad parameter", "retarget"): (200, None),
    ("bad parameter", "regenerate secret"): (401, None),
    ("bad parameter", "delete"): (401, None),
    ("bad parameter", "downgrade"): (403, None),
}


@pytest.mark.parametrize(("refusal", "edit"), list(EDITS_DURING_A_REFUSAL))
def test_a_refused_rest_write_is_logged_against_the_connection_as_its_transaction_reads_it(
    plan: Plan, monkeypatch: pytest.MonkeyPatch, refusal: str, edit: str
) -> None:
    """A write refused before writing (every record rejected, a bad parameter) was logged
    without the write's guard, against the connection as the secret check had read it: a
    regenerated secret, a deleted connection or a downgraded plan still got a 200 failure
    (and a deleted connection a log entry), an edited Schema Map or Resource to Update a
    refusal judged with the old ones. The edit is injected after the secret check."""
    import api.sync

    _, chosen_id = updating(plan)
    connection, first_id = updating(plan)
    url = f"/plans/{plan.plan_id}/connections/{connection['id']}"
    changes: dict[str, Any] = {
        "retarget": {"resourceToUpdate": chosen_id},
        "schema map": {"schemaMap": {**ITEM_MAP, "weight": "grams"}},
    }.get(edit, {})
    rows_before = {rid: plan.rows(rid) for rid in (first_id, chosen_id)}
    real_parse = api.sync.parse_row_key
    edited: list[int] = []

    def edit_then_parse(*args: Any, **kwargs: Any) -> Any:
        if not edited:
            _edit_connection(plan, url, edit, changes)
            edited.append(1)
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(api.sync, "parse_row_key", edit_then_parse)
    if refusal == "rejected":
        result = plan.write("PUT", connection, {"payload": [item("Z", mass="heavy")]})
    else:
        result = plan.write(
            "PATCH", connection, {"payload": [item("Z")]}, params={"dim_conv": "cubits"}
        )
    assert edited == [1]
    status, named = EDITS_DURING_A_REFUSAL[(refusal, edit)]
    assert result.status_code == status, result.text
    if edit == "downgrade":
        plan.store.set_tier("acme", "premium")
    assert {rid: plan.rows(rid) for rid in (first_id, chosen_id)} == rows_before
    if status == 200:
        assert result.json["status"] == "failure"
        (entry,) = plan.log(connection)
        assert entry["messages"][0].startswith("dim_conv")
    elif status == 409:
        assert result.json["details"] == (
            f"the connection changed while this write was being prepared ({named}), so "
            "nothing was written; send it again to write with the connection's current "
            "settings"
        )
        (entry,) = plan.log(connection)
        assert (entry["trigger"], entry["status"]) == ("rest PUT", "failure")
        assert entry["messages"][0] == result.json["details"]
    else:
        assert result.json["error"] == ("Forbidden" if status == 403 else "Unauthorized")
        if edit == "delete":  # no entry left behind for a connection that is no more
            assert read_log(plan.store, connection["id"], limit=10, offset=0) == []


@pytest.mark.parametrize(
    "changes",
    [
        {"name": "renamed", "syncFrequency": "Daily"},
        {"thirdPartyApiUrl": "https://example.com/items", "schemaRootPath": "data"},
        # The write names its own conversion: the connection's is not what it used.
        {"dimConv": "mm_to_in"},
    ],
)
def test_an_edit_that_does_not_change_a_rest_write_lets_it_through(
    plan: Plan, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any]
) -> None:
    import api.sync

    connection, resource_id = updating(plan, dimConv="in_to_mm")
    url = f"/plans/{plan.plan_id}/connections/{connection['id']}"
    real_write = api.sync.write_batch

    def edit_then_write(*args: Any, **kwargs: Any) -> Any:
        done = plan.client.simulate_patch(url, json=changes, headers=plan.auth)
        assert done.status_code == 200, done.text
        return real_write(*args, **kwargs)

    monkeypatch.setattr(api.sync, "write_batch", edit_then_write)
    result = plan.write(
        "PATCH", connection, {"payload": [item(3, h=25.4)]}, params={"dim_conv": "mm_to_in"}
    )
    assert (result.status_code, result.json["status"]) == (200, "success"), result.text
    assert [(r["refId"], r["dimensions_x"]) for r in plan.rows(resource_id)][-1] == ("3", 1.0)
