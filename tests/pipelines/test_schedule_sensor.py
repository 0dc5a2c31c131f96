"""The `connection_schedules` sensor evaluated with Dagster's test context at chosen instants."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from dagster import (
    AddDynamicPartitionsRequest,
    DagsterInstance,
    DeleteDynamicPartitionsRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
)

from pipelines.definitions import defs
from pipelines.pulls import SLOT_TAG, TRIGGER_TAG, build_schedule_sensor
from tests.pipelines.file_catalog import FileCatalog, FileCatalogResource


@pytest.fixture
def catalog(tmp_path: Path) -> FileCatalog:
    return FileCatalog(tmp_path / "catalog.json")


def evaluate(catalog: FileCatalog, instance: DagsterInstance, now: datetime) -> SensorResult:
    sensor = build_schedule_sensor(now=lambda: now)
    context = build_sensor_context(
        instance=instance, resources={"catalog": FileCatalogResource(path=str(catalog.path))}
    )
    result = sensor(context)
    assert isinstance(result, SensorResult)
    return result


def apply_partitions(instance: DagsterInstance, result: SensorResult) -> None:
    """Do what the sensor daemon does with the partition requests of a tick."""
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)


def run_keys(result: SensorResult) -> dict[str, str]:
    return {r.partition_key or "": r.run_key or "" for r in result.run_requests or []}


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc, arg-type]


@pytest.mark.parametrize(
    ("frequency", "start", "zone", "now", "slot"),
    [
        # before the start: nothing is due
        ("Daily", "2026-11-02T09:00", "UTC", utc(2026, 11, 2, 8, 59), None),
        ("Hourly", "2026-11-02T09:20", "UTC", utc(2026, 11, 2, 12, 19, 59), "2026-11-02T11:20:00Z"),
        ("Daily", "2026-11-02T09:00", "UTC", utc(2026, 11, 5, 9, 0, 30), "2026-11-05T09:00:00Z"),
        ("Weekly", "2026-11-02T09:00", "UTC", utc(2026, 11, 15, 23), "2026-11-09T09:00:00Z"),
        # monthly on the 31st: last day of February, back to the 31st in March
        ("Monthly", "2027-01-31T10:00", "UTC", utc(2027, 3, 30), "2027-02-28T10:00:00Z"),
        ("Monthly", "2027-01-31T10:00", "UTC", utc(2027, 3, 31, 10), "2027-03-31T10:00:00Z"),
        # 02:30 does not exist in New York on 8 March 2026: it runs when the clocks jump
        (
            "Daily",
            "2026-03-01T02:30",
            "America/New_York",
            utc(2026, 3, 8, 7, 1),
            "2026-03-08T07:00:00Z",
        ),
        # 01:30 happens twice on 1 November 2026: the first (EDT) only
        (
            "Daily",
            "2026-10-01T01:30",
            "America/New_York",
            utc(2026, 11, 1, 6, 45),
            "2026-11-01T05:30:00Z",
        ),
        # downtime of a week: only the latest missed slot is requested
        (
            "Daily",
            "2026-10-01T06:00",
            "Europe/Berlin",
            utc(2026, 11, 9, 12),
            "2026-11-09T05:00:00Z",
        ),
    ],
)
def test_due_slot_per_frequency(
    catalog: FileCatalog,
    instance: DagsterInstance,
    frequency: str,
    start: str,
    zone: str,
    now: datetime,
    slot: str | None,
) -> None:
    catalog.add_connection("c1", start=start, frequency=frequency, time_zone=zone)
    result = evaluate(catalog, instance, now)
    if slot is None:
        assert result.run_requests == []
        return
    (request,) = result.run_requests or []
    assert request.run_key == f"c1@{slot}"
    assert request.partition_key == "c1"
    assert request.tags == {TRIGGER_TAG: "schedule", SLOT_TAG: slot}


def test_partitions_follow_connections(catalog: FileCatalog, instance: DagsterInstance) -> None:
    catalog.add_connection("a", start="2026-01-01T00:00", frequency="Daily")
    catalog.add_connection("b")  # manual only: a partition, never a scheduled run
    catalog.add_connection("c", start="2030-01-01T00:00", frequency="Hourly")  # not started
    first = evaluate(catalog, instance, utc(2026, 11, 2, 12))
    assert first.dynamic_partitions_requests == [
        AddDynamicPartitionsRequest("connections", ["a", "b", "c"])
    ]
    assert run_keys(first) == {"a": "a@2026-11-02T00:00:00Z"}
    apply_partitions(instance, first)
    assert sorted(instance.get_dynamic_partitions("connections")) == ["a", "b", "c"]

    catalog.delete_connection("a")
    catalog.add_connection("d", start="2026-11-02T11:30", frequency="Hourly")
    second = evaluate(catalog, instance, utc(2026, 11, 2, 12))
    assert second.dynamic_partitions_requests == [
        AddDynamicPartitionsRequest("connections", ["d"]),
        DeleteDynamicPartitionsRequest("connections", ["a"]),
    ]
    assert run_keys(second) == {"d": "d@2026-11-02T11:30:00Z"}
    apply_partitions(instance, second)
    assert sorted(instance.get_dynamic_partitions("connections")) == ["b", "c", "d"]

    third = evaluate(catalog, instance, utc(2026, 11, 2, 12, 5))
    assert third.dynamic_partitions_requests == []


def test_every_tick_within_a_slot_asks_for_the_same_run(
    catalog: FileCatalog, instance: DagsterInstance
) -> None:
    catalog.add_connection("c1", start="2026-11-02T09:00", frequency="Hourly")
    ticks = [utc(2026, 11, 2, 10, minute) for minute in (0, 1, 30, 59)]
    keys = {run_keys(evaluate(catalog, instance, t))["c1"] for t in ticks}
    assert keys == {"c1@2026-11-02T10:00:00Z"}
    assert run_keys(evaluate(catalog, instance, utc(2026, 11, 2, 11)))["c1"] != keys.pop()


def test_the_service_defs_skip_while_the_store_cannot_open(
    instance: DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CARTONIZE_DATA_DIR", str(blocker / "data"))
    sensor = defs.resolve_sensor_def("connection_schedules")
    context = build_sensor_context(instance=instance, resources=dict(defs.resources or {}))
    result = sensor(context)
    assert isinstance(result, SkipReason)
    assert "cannot be opened" in (result.skip_message or "")
