"""The pipeline bound to the real store (`StoreCatalog`): pulls from the loopback source
write through the same mapping and writes as the REST API, log with trigger, run id and
duration; the sensor reads the store's connections; pulls and REST writes race safely."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cartonize.store import Store
from cartonize.sync import store_catalog
from cartonize.sync.catalog import PullBusy
from cartonize.sync.connections import (
    Connection,
    delete_connection,
    read_log,
    update_connection,
)
from cartonize.sync.crypto import SecretBox
from cartonize.sync.mapping import map_records
from cartonize.sync.resources import get_resource, read_rows
from cartonize.sync.store_catalog import StoreCatalog
from cartonize.sync.writes import RunInfo, write_batch
from dagster import (
    DagsterInstance,
    ExecuteInProcessResult,
    RunRequest,
    SensorResult,
    build_sensor_context,
    materialize,
)
from dagster._core.storage.tags import PARTITION_NAME_TAG

from pipelines.pulls import TRIGGER_TAG, build_schedule_sensor, synced_resource
from pipelines.resources import SourceClientResource, StoreCatalogResource
from pipelines.runs import CONNECTION_TAG, PullRuns, _pull_job
from tests.sync.third_party import (
    CREATED,
    SCHEMA_MAP,
    ThirdPartyServer,
    connect,
    make_record,
)

NOW = CREATED


@pytest.fixture
def account_id(store: Store) -> int:
    account = store.create_account("acme", "enterprise")
    store.set_connections_enabled("acme", True)
    return account.id


def seeded_resource(store: Store, connection: Connection, refs: list[str]) -> int:
    records = [{"refId": r, "dimensions_x": 1, "dimensions_y": 1, "dimensions_z": 1} for r in refs]
    result = write_batch(
        store, connection, map_records(records, {}, "items"), "create", trigger="rest POST", now=NOW
    )
    assert result.resource_id is not None
    return result.resource_id


def pull(
    store: Store, instance: DagsterInstance, connection_id: int, trigger: str = "schedule"
) -> ExecuteInProcessResult:
    key = str(connection_id)
    if not instance.has_dynamic_partition("connections", key):
        instance.add_dynamic_partitions("connections", [key])
    return materialize(
        [synced_resource],
        partition_key=key,
        instance=instance,
        resources={
            "catalog": StoreCatalogResource(data_dir=str(store.data_dir)),
            "source": SourceClientResource(allow_networks="127.0.0.0/8", max_attempts=1),
        },
        tags={TRIGGER_TAG: trigger},
        raise_on_error=False,
    )


def figures(result: ExecuteInProcessResult) -> dict[str, Any]:
    (event,) = result.get_asset_materialization_events()
    assert event.materialization.metadata is not None
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_blank_resource_to_update_creates_a_named_resource_each_pull(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    connection, _ = connect(store, account_id, third_party)
    first, second = pull(store, instance, connection.id), pull(store, instance, connection.id)
    assert first.success and second.success
    ids = [int(figures(r)["resource_id"]) for r in (first, second)]
    assert ids[0] != ids[1]
    for resource_id in ids:
        resource = get_resource(store, account_id, resource_id)
        assert resource is not None and resource.name.startswith("WMS items 20")
        rows = store.transaction(lambda con, rid=resource_id: read_rows(con, "items", rid))
        assert len(rows) == 40 and rows[5]["refId"] == "SKU-000005"
        assert rows[5]["dimensions_z"] == 4.5 and rows[5]["weight"] == 0.875
    log = read_log(store, connection.id, limit=10, offset=0)
    assert [e.trigger for e in log] == ["schedule", "schedule"]
    assert {e.run_id for e in log} == {first.run_id, second.run_id}
    assert all(e.duration_s is not None and e.duration_s >= 0 for e in log)
    assert [e.inserted for e in log] == [40, 40]
    checks = {c.check_name: c.passed for c in first.get_asset_check_evaluations()}
    assert checks == {"required_properties_present": True, "ref_ids_unique": True}


def test_set_resource_to_update_is_overwritten(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    seed, _ = connect(store, account_id, third_party, n=10)
    resource_id = seeded_resource(store, seed, ["old-1", "old-2", "old-3"])
    connection, _ = connect(store, account_id, third_party, n=10, resource_to_update=resource_id)
    result = pull(store, instance, connection.id, trigger="webhook")
    assert result.success
    assert int(figures(result)["resource_id"]) == resource_id
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    assert [r["refId"] for r in rows] == [f"SKU-{i:06d}" for i in range(10)]
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.trigger == "webhook" and entry.resource_id == resource_id


def test_a_pull_whose_records_all_fail_keeps_the_old_rows(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    seed, _ = connect(store, account_id, third_party)
    resource_id = seeded_resource(store, seed, ["keep-me"])
    # "description" ("Item number 3") cannot be a length: every record is rejected.
    connection, _ = connect(
        store,
        account_id,
        third_party,
        resource_to_update=resource_id,
        schema_map={**SCHEMA_MAP, "dimensions_x": "description"},
    )
    result = pull(store, instance, connection.id)
    assert not result.success
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    assert [r["refId"] for r in rows] == ["keep-me"]
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure" and entry.rejected == 40
    assert "none of the 40 records could be used" in entry.messages[0]
    # Each record is named by its SKU as well as its position in the pulled list.
    assert entry.messages[1] == (
        'record 0 (refId "SKU-000000"): rejected: dimensions_x (description): '
        '"Item number 0" is not a number'
    )


def test_a_pulled_record_with_a_non_finite_property_is_rejected_alone(
    store: Store, account_id: int, third_party: ThirdPartyServer
) -> None:
    # The pull's step crashed on it (encoding JSON), importing none of the valid records.
    seed, _ = connect(store, account_id, third_party)
    resource_id = seeded_resource(store, seed, ["old"])
    smap = {**SCHEMA_MAP, "properties.color": "attributes.color"}
    connection, _ = connect(
        store, account_id, third_party, resource_to_update=resource_id, schema_map=smap
    )
    bad, good = make_record(1), make_record(2)
    bad["attributes"]["color"] = float("inf")
    catalog = StoreCatalog(store, SecretBox.for_data_dir(store.data_dir))
    result = catalog.import_records(str(connection.id), [bad, good], trigger="webhook", at=NOW)
    assert (result.status, result.inserted, result.rejected) == ("success", 1, 1)
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    assert [r["refId"] for r in rows] == ["SKU-000002"]
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.messages[0].startswith('record 0 (refId "SKU-000001"): rejected: properties.color')


def test_source_failure_is_logged_with_the_run(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    connection, _ = connect(store, account_id, third_party)
    third_party.fail_next(503, times=1)
    result = pull(store, instance, connection.id)
    assert not result.success
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure" and "answered 503" in entry.messages[0]
    assert entry.run_id == result.run_id


def test_a_stored_non_ascii_key_fails_the_pull_cleanly_naming_the_field(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    # Saving refuses it now; one stored before crashed every pull inside httpx
    # (UnicodeEncodeError: the step failed with no log entry).
    connection, _ = connect(store, account_id, third_party)
    encrypted = SecretBox.for_data_dir(store.data_dir).encrypt("ключ-123")
    store.transaction(
        lambda con: con.execute(
            "UPDATE connections SET api_key_encrypted = ? WHERE id = ?", [encrypted, connection.id]
        )
    )
    result = pull(store, instance, connection.id)
    assert not result.success
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure" and entry.run_id == result.run_id
    assert entry.messages[0].startswith(
        "Third-Party API Key: the Third-Party API Key contains 'к', which is not ASCII"
    )
    assert third_party.seen == []


def test_connection_deleted_between_schedule_and_run_fails_cleanly(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    connection, _ = connect(
        store, account_id, third_party, start_at=NOW - timedelta(hours=3), sync_frequency="Hourly"
    )
    sensor = build_schedule_sensor(now=lambda: NOW)
    context = build_sensor_context(
        instance=instance,
        resources={"catalog": StoreCatalogResource(data_dir=str(store.data_dir))},
    )
    tick = sensor(context)
    assert isinstance(tick, SensorResult) and tick.run_requests
    assert delete_connection(store, account_id, connection.id)
    result = pull(store, instance, connection.id)
    assert not result.success
    failure = result.get_step_failure_events()[0]
    description = failure.step_failure_data.user_failure_data.description  # type: ignore[union-attr]
    assert description is not None and f"connection {connection.id} no longer exists" in description
    assert third_party.seen == []


def test_an_account_without_connections_is_not_pulled(
    store: Store, account_id: int, third_party: ThirdPartyServer
) -> None:
    connection, _ = connect(store, account_id, third_party)
    catalog = StoreCatalog.for_data_dir(store.data_dir)
    assert catalog.pull_spec(str(connection.id)) is not None
    store.set_tier("acme", "free")
    assert catalog.pull_spec(str(connection.id)) is None
    assert catalog.scheduled_connections() == []
    assert catalog.pull_spec("not-an-id") is None


def test_the_sensor_reads_the_store(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    daily, _ = connect(
        store,
        account_id,
        third_party,
        start_at=datetime(2026, 11, 1, 8, 30),
        time_zone="Europe/Berlin",
        sync_frequency="Daily",
    )
    rest_only, _ = connect(
        store,
        account_id,
        third_party,
        third_party_api_url=None,
        start_at=datetime(2026, 11, 1, 8, 30),
        sync_frequency="Daily",
    )
    on_demand, _ = connect(store, account_id, third_party)
    sensor = build_schedule_sensor(now=lambda: NOW)
    context = build_sensor_context(
        instance=instance,
        resources={"catalog": StoreCatalogResource(data_dir=str(store.data_dir))},
    )
    result = sensor(context)
    assert isinstance(result, SensorResult)
    (added,) = result.dynamic_partitions_requests or []
    assert sorted(added.partition_keys or []) == sorted(
        str(c.id) for c in (daily, rest_only, on_demand)
    )
    (request,) = result.run_requests or []
    assert isinstance(request, RunRequest)
    # 08:30 in Berlin (CET, UTC+1) on 2 November is 07:30 UTC.
    assert request.run_key == f"{daily.id}@2026-11-02T07:30:00Z"
    assert request.partition_key == str(daily.id)


REST_WRITER = textwrap.dedent(
    """
    import sys
    from cartonize.store import Store
    from falcon import testing
    from api.app import AppConfig, create_app

    data_dir, public_id, secret, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = testing.TestClient(create_app(config=AppConfig(), store=Store(data_dir)))
    for i in range(count):
        record = {"sku": f"REST-{i}", "dimensions": {"length": 1, "width": 1, "height": 1}}
        answer = client.simulate_patch(
            f"/sync-api/{public_id}/rest",
            json={"payload": [record], "row_key": ["refId"]},
            headers={"X-Service-API-Secret": secret},
        )
        assert answer.status_code == 200 and answer.json["status"] == "success", answer.text
    """
)


def test_the_pull_lock_is_per_connection_and_gives_up_after_its_wait(store: Store) -> None:
    catalog = StoreCatalog(store, SecretBox.for_data_dir(store.data_dir))
    other = StoreCatalog(store, SecretBox.for_data_dir(store.data_dir))
    with catalog.pull_lock("1", wait=1):
        with other.pull_lock("2", wait=0.1):
            pass  # another connection's pull is not held up
        started = time.monotonic()
        busy = pytest.raises(PullBusy, match="another pull of this connection was still running")
        with busy, other.pull_lock("1", wait=0.2):
            pass
        assert time.monotonic() - started >= 0.2
    with other.pull_lock("1", wait=0.1):
        pass  # released on exit


def test_overlapping_pulls_of_one_connection_commit_the_newest_read(
    store: Store,
    account_id: int,
    third_party: ThirdPartyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two webhook runs (processes of their own) of one connection: the first reads the
    source slowly, the second starts while it waits. The second ran at once, read newer
    data and committed first; the first then committed its older data over it."""
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    seed, _ = connect(store, account_id, third_party)
    resource_id = seeded_resource(store, seed, ["seed"])
    connection, _ = connect(
        store,
        account_id,
        third_party,
        resource_to_update=resource_id,
        third_party_api_url=third_party.url("/versioned?n=3&delay=3"),
        schema_root_path=None,
    )
    runs = PullRuns(store, tmp_path / "dagster")
    older = runs.start(connection, "webhook")
    deadline = time.monotonic() + 60
    while not third_party.seen:  # the older run is reading
        assert time.monotonic() < deadline, "the first run never read the source"
        time.sleep(0.05)
    newer = runs.start(connection, "webhook")
    statuses = [runs.wait(run_id, 120) for run_id in (older, newer)]
    assert all(s is not None and s.status == "success" for s in statuses), statuses
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    assert [r["refId"] for r in rows] == ["v2-0", "v2-1", "v2-2"]
    log = read_log(store, connection.id, limit=10, offset=0)
    assert [(e.run_id, e.status) for e in log] == [(newer, "success"), (older, "success")]


def test_scheduled_and_webhook_pulls_race_rest_writes(
    store: Store,
    account_id: int,
    third_party: ThirdPartyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scheduled pull, a webhook pull (each a Dagster run in its own process) and a REST
    writer process on one resource at once: each write is whole, and the final rows are
    the last pull's records plus the REST rows committed after it."""
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    seed, _ = connect(store, account_id, third_party)
    resource_id = seeded_resource(store, seed, ["seed"])
    connection, secret = connect(
        store, account_id, third_party, n=300, resource_to_update=resource_id
    )
    runs = PullRuns(store, tmp_path / "dagster")
    script = tmp_path / "rest_writer.py"
    script.write_text(REST_WRITER)
    root = Path(__file__).resolve().parents[2]
    writer = subprocess.Popen(
        [sys.executable, str(script), str(store.data_dir), connection.public_api_id, secret, "15"],
        cwd=root,
        # Prepended, not replaced: a PYTHONPATH naming this tree's `python/` must stay.
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p
            ),
        },
        stderr=subprocess.PIPE,
    )
    scheduled = runs.start(connection, "schedule")
    webhook = runs.start(connection, "webhook")
    _, err = writer.communicate(timeout=240)
    assert writer.returncode == 0, err.decode()[-2000:]
    deadline = time.monotonic() + 240
    statuses = [
        runs.wait(run_id, max(1.0, deadline - time.monotonic())) for run_id in (scheduled, webhook)
    ]
    assert all(s is not None and s.status == "success" for s in statuses), statuses

    log = store.transaction(
        lambda con: con.execute(
            "SELECT id, trigger, status, inserted, run_id FROM connection_log "
            "WHERE connection_id = ? ORDER BY id",
            [connection.id],
        ).fetchall()
    )
    assert all(row[2] == "success" for row in log)
    assert sorted(row[1] for row in log) == sorted(["schedule", "webhook"] + ["rest PATCH"] * 15)
    last_pull = max(row[0] for row in log if row[1] in ("schedule", "webhook"))
    later_rest = [row for row in log if row[1] == "rest PATCH" and row[0] > last_pull]
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    refs = [r["refId"] for r in rows]
    assert len(refs) == len(set(refs))
    pulled = {f"SKU-{i:06d}" for i in range(300)}
    assert pulled <= set(refs)
    assert len(rows) == 300 + len(later_rest)
    assert "seed" not in refs
    assert {row[4] for row in log if row[1] != "rest PATCH"} == {scheduled, webhook}


def test_a_connection_retargeted_during_its_pull_writes_nothing(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    """A user points the connection at another list (and source) while a slow pull reads
    the old source: the old source's records overwrote the list the user just chose."""
    seed, _ = connect(store, account_id, third_party)
    first = seeded_resource(store, seed, ["a-1"])
    chosen = seeded_resource(store, seed, ["keep-1", "keep-2"])
    connection, _ = connect(
        store,
        account_id,
        third_party,
        resource_to_update=first,
        third_party_api_url=third_party.url("/slow?delay=1.5&n=3&root=data.items"),
    )
    outcome: list[ExecuteInProcessResult] = []
    running = threading.Thread(
        target=lambda: outcome.append(pull(store, instance, connection.id, trigger="webhook"))
    )
    running.start()
    deadline = time.monotonic() + 30
    while not third_party.seen:  # the pull is reading the slow source
        assert time.monotonic() < deadline, "the pull never read the source"
        time.sleep(0.02)
    box = SecretBox.for_data_dir(store.data_dir)
    changed = update_connection(
        store,
        box,
        account_id,
        connection.id,
        {"resourceToUpdate": chosen, "thirdPartyApiUrl": third_party.url("/records?n=1")},
        NOW,
    )
    assert changed is not None and changed.resource_to_update == chosen
    running.join(60)
    (result,) = outcome
    assert not result.success
    for resource_id, refs in ((first, ["a-1"]), (chosen, ["keep-1", "keep-2"])):
        rows = store.transaction(lambda con, rid=resource_id: read_rows(con, "items", rid))
        assert [r["refId"] for r in rows] == refs
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure"
    assert "changed during the pull" in entry.messages[0]
    assert "Third-Party API URL" in entry.messages[0] and "Resource to Update" in entry.messages[0]


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ("retarget", "Resource to Update"),
        ("source", "Third-Party API URL"),
        ("schema_map", "Schema Map"),
        ("delete", "was deleted"),
    ],
)
def test_an_edit_between_mapping_and_write_gets_no_write(
    store: Store,
    account_id: int,
    third_party: ThirdPartyServer,
    instance: DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
    edit: str,
    named: str,
) -> None:
    """The check of the connection ran before mapping, outside the write's transaction: an
    edit landing after it (here injected between mapping and write, where a 100,000-record
    mapping leaves a third of a second) let the pull overwrite the list it was started
    for, which the user had just replaced, with records of the old source."""
    seed, _ = connect(store, account_id, third_party)
    first = seeded_resource(store, seed, ["a-1"])
    chosen = seeded_resource(store, seed, ["keep-1", "keep-2"])
    connection, _ = connect(store, account_id, third_party, n=3, resource_to_update=first)
    box = SecretBox.for_data_dir(store.data_dir)
    changes: dict[str, Any] = {
        "retarget": {"resourceToUpdate": chosen},
        "source": {"thirdPartyApiUrl": third_party.url("/records?n=1")},
        "schema_map": {"schemaMap": {**SCHEMA_MAP, "name": "description"}},
    }.get(edit, {})
    real_write = store_catalog.write_batch
    edited: list[bool] = []

    def edit_then_write(*args: Any, **kwargs: Any) -> Any:
        # Mapping is done; the edit commits before the write's transaction begins.
        if edit == "delete":
            assert delete_connection(store, account_id, connection.id)
        else:
            assert update_connection(store, box, account_id, connection.id, changes, NOW)
        edited.append(True)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(store_catalog, "write_batch", edit_then_write)
    result = pull(store, instance, connection.id, trigger="webhook")
    assert edited == [True]
    assert not result.success
    for resource_id, refs in ((first, ["a-1"]), (chosen, ["keep-1", "keep-2"])):
        rows = store.transaction(lambda con, rid=resource_id: read_rows(con, "items", rid))
        assert [r["refId"] for r in rows] == refs
    if edit == "delete":
        # No connection, no log to write to; the run's failure says why.
        assert read_log(store, connection.id, limit=10, offset=0) == []
        assert named in str(result.all_events)
        return
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure" and entry.inserted == 0
    assert entry.messages[0].startswith("the connection changed during the pull (")
    assert named in entry.messages[0]


def test_a_pulled_record_repeating_a_key_with_different_values_is_rejected(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    """`{"sku": "A", "sku": "B"}` was stored as B: Python's json keeps the last value of a
    repeated key silently. Now the record is refused like any record whose values cannot
    be read, named by position and refId; a key repeated with one value passes."""
    smap = {**SCHEMA_MAP, "properties.fragile": "attributes.fragile"}
    connection, _ = connect(
        store,
        account_id,
        third_party,
        third_party_api_url=third_party.url("/repeated-keys"),
        schema_map=smap,
    )
    result = pull(store, instance, connection.id)
    assert result.success
    resource_id = int(figures(result)["resource_id"])
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    assert [r["refId"] for r in rows] == ["SKU-000000", "SKU-000002", "SKU-000004"]
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert (entry.received, entry.inserted, entry.rejected) == (6, 3, 3)
    assert entry.messages == [
        'record 1 (refId "SKU-OTHER"): rejected: "sku" is named more than once, with '
        'different values ("SKU-000001", "SKU-OTHER")',
        'record 3 (refId "SKU-000003"): rejected: "dimensions.length" is named more than '
        "once, with different values (13, 99)",
        'record 5 (refId "SKU-000005"): rejected: "attributes.fragile" is named more than '
        "once, with different values (false, 0)",
    ]


def test_an_envelope_repeating_the_root_path_key_fails_the_pull(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    """Which of two different `data` objects holds the records? The last one was taken."""
    seed, _ = connect(store, account_id, third_party)
    resource_id = seeded_resource(store, seed, ["keep-me"])
    connection, _ = connect(
        store,
        account_id,
        third_party,
        resource_to_update=resource_id,
        third_party_api_url=third_party.url("/repeated-keys?root=twice"),
    )
    result = pull(store, instance, connection.id)
    assert not result.success
    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    assert [r["refId"] for r in rows] == ["keep-me"]
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure"
    assert "the top level names 'data' more than once, with different values" in (entry.messages[0])


def test_a_run_that_failed_after_its_write_committed_answers_success(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> None:
    """The pull process killed (or the store locked for the asset checks) after the rows
    and the log entry committed: Dagster marks the run failed, but the import happened,
    and the run status said failure (with the reaper's message), inviting a second pull."""
    connection, _ = connect(store, account_id, third_party)
    runs = PullRuns(store, tmp_path / "dagster")
    key = str(connection.id)
    runs.instance.add_dynamic_partitions("connections", [key])
    job = _pull_job()
    run = runs.instance.create_run_for_job(
        job.get_definition(),
        run_config={},
        tags={PARTITION_NAME_TAG: key, TRIGGER_TAG: "webhook", CONNECTION_TAG: key},
        job_code_origin=job.get_python_origin(),
    )
    records = [{"sku": "K-1", "dimensions": {"length": 1, "width": 2, "height": 3}}]
    written = write_batch(
        store,
        connection,
        map_records(records, connection.schema_map, "items"),
        "create",
        trigger="webhook",
        now=NOW,
        run=RunInfo(run.run_id, NOW),
    )
    assert written.status == "success"
    runs.instance.report_run_failed(run, "the pull process exited with code -9")
    status = runs.status(run.run_id)
    assert status is not None
    assert (status.status, status.resource_id, status.inserted) == (
        "success",
        written.resource_id,
        1,
    )
    assert status.to_wire()["status"] == "success"


def test_credentials_the_key_file_cannot_decrypt_fail_the_pull_in_its_log(
    store: Store, account_id: int, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    """The store restored without its sync.key (a new one is made on first use): every
    pull of a connection with a key failed with a bare CredentialError in Dagster only, so
    the connection log, all the console shows, never said why pulls had stopped."""
    connection, _ = connect(store, account_id, third_party)
    key_file = store.data_dir / "sync.key"
    assert key_file.exists()
    key_file.write_bytes(base64.b64encode(os.urandom(32)) + b"\n")
    result = pull(store, instance, connection.id)
    assert not result.success
    assert third_party.seen == []
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure" and entry.run_id == result.run_id
    assert "cannot be decrypted" in entry.messages[0]
    assert "enter the Third-Party API Key and Token again" in entry.messages[0]


def test_connections_disabled_during_a_pull_say_so(
    store: Store, account_id: int, third_party: ThirdPartyServer
) -> None:
    """An operator disabled the account's connections while its pull read the source:
    nothing is written, and the run no longer claims the connection was deleted."""
    connection, _ = connect(store, account_id, third_party)
    catalog = StoreCatalog.for_data_dir(store.data_dir)
    store.set_connections_enabled("acme", False)
    outcome = catalog.import_records(
        str(connection.id), [make_record(1)], trigger="schedule", at=NOW
    )
    assert outcome.status == "failure"
    assert outcome.messages == [
        f"connection {connection.id} was deleted, or its account's connections were "
        "disabled, during the pull; nothing was written"
    ]


def test_webhook_calls_during_a_slow_pull_join_the_waiting_run(
    store: Store,
    account_id: int,
    third_party: ThirdPartyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client calling the webhook again and again while the source is slow: each call
    started a run process (~200 MB) that waited for the pull lock, without bound (6 calls
    held 1.2 GB and read the source 6 times). One runs, one waits, later calls join it."""
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    connection, _ = connect(
        store,
        account_id,
        third_party,
        third_party_api_url=third_party.url("/slow?delay=2&n=3&root=data.items"),
    )
    runs = PullRuns(store, tmp_path / "dagster")
    started = [runs.start(connection, "webhook") for _ in range(4)]
    assert len(set(started)) == 2
    assert started[2] == started[3] == started[1] != started[0]
    statuses = [runs.wait(run_id, 120) for run_id in started[:2]]
    assert all(s is not None and s.status == "success" for s in statuses), statuses
    assert len(third_party.seen) == 2
    # Once they are done, a call starts a run of its own again.
    again = runs.start(connection, "webhook")
    assert again not in started
    finished = runs.wait(again, 120)
    assert finished is not None and finished.status == "success"
