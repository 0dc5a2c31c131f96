"""`synced_resource` materialised in process against the loopback source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance, ExecuteInProcessResult, materialize

from pipelines.pulls import TRIGGER_TAG, synced_resource
from pipelines.resources import SourceClientResource
from tests.pipelines.file_catalog import FileCatalog, FileCatalogResource
from tests.sync.third_party import (
    API_KEY,
    API_TOKEN,
    HEADERS_TEMPLATE,
    SCHEMA_MAP,
    ThirdPartyServer,
)


@pytest.fixture
def catalog(tmp_path: Path) -> FileCatalog:
    return FileCatalog(tmp_path / "catalog.json")


def add_source_connection(
    catalog: FileCatalog, server: ThirdPartyServer, n: int = 40, **extra: Any
) -> None:
    catalog.add_connection(
        "c1",
        url=server.url(f"/records?n={n}&root=data.items"),
        root_path="data.items",
        schema_map=extra.pop("schema_map", SCHEMA_MAP),
        headers_template=HEADERS_TEMPLATE,
        api_key=API_KEY,
        api_token=API_TOKEN,
        **extra,
    )


def pull(
    catalog: FileCatalog,
    instance: DagsterInstance,
    partition: str = "c1",
    tags: dict[str, str] | None = None,
) -> ExecuteInProcessResult:
    if not instance.has_dynamic_partition("connections", partition):
        instance.add_dynamic_partitions("connections", [partition])
    return materialize(
        [synced_resource],
        partition_key=partition,
        instance=instance,
        resources={
            "catalog": FileCatalogResource(path=str(catalog.path)),
            # two attempts: the retry test below waits one backoff (at most 1 s), not four
            "source": SourceClientResource(allow_networks="127.0.0.0/8", max_attempts=2),
        },
        tags=tags or {},
        raise_on_error=False,
    )


def metadata(result: ExecuteInProcessResult) -> dict[str, Any]:
    (event,) = result.get_asset_materialization_events()
    assert event.materialization.metadata is not None
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_scheduled_pull_creates_a_resource_and_reports_figures(
    catalog: FileCatalog, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    add_source_connection(catalog, third_party)
    result = pull(catalog, instance, tags={TRIGGER_TAG: "schedule"})
    assert result.success
    figures = metadata(result)
    assert figures["records_fetched"] == 40 and figures["inserted"] == 40
    assert figures["rejected"] == 0 and figures["trigger"] == "schedule"
    assert figures["duration_s"] >= 0
    (resource_id,) = catalog.resource_ids()
    assert figures["resource_id"] == resource_id
    assert catalog.rows(resource_id)[3]["dimensions_x"] == 13
    (entry,) = catalog.log()
    assert entry["trigger"] == "schedule" and entry["status"] == "success"
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks == {"required_properties_present": True, "ref_ids_unique": True}


@pytest.mark.parametrize("resource_to_update", [None, "res-1"])
def test_each_write_mode_runs_twice(
    catalog: FileCatalog,
    third_party: ThirdPartyServer,
    instance: DagsterInstance,
    resource_to_update: str | None,
) -> None:
    add_source_connection(catalog, third_party, resource_to_update=resource_to_update)
    first, second = pull(catalog, instance), pull(catalog, instance)
    assert first.success and second.success
    ids = [metadata(first)["resource_id"], metadata(second)["resource_id"]]
    if resource_to_update is None:
        assert ids[0] != ids[1] and len(catalog.resource_ids()) == 2  # a new resource each time
    else:
        assert ids == ["res-1", "res-1"] and catalog.resource_ids() == ["res-1"]
        assert catalog.log()[1]["replaced"] == 40
    assert [e["trigger"] for e in catalog.log()] == ["webhook", "webhook"]


def test_source_failure_fails_the_run_and_is_logged(
    catalog: FileCatalog, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    add_source_connection(catalog, third_party)
    third_party.fail_next(503, times=5, retry_after="0")
    result = pull(catalog, instance)
    assert not result.success
    (entry,) = catalog.log()
    assert entry["status"] == "failure"
    assert "answered 503 Service Unavailable" in entry["message"]
    assert "gave up after 2 attempts" in entry["message"]
    failure = result.get_step_failure_events()[0]
    assert "answered 503" in (failure.step_failure_data.user_failure_data.description or "")  # type: ignore[union-attr]


def test_not_a_list_fails_with_what_was_found(
    catalog: FileCatalog, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    catalog.add_connection(
        "c1",
        url=third_party.url("/not-a-list"),
        root_path="data.items",
        headers_template=HEADERS_TEMPLATE,
        api_key=API_KEY,
        api_token=API_TOKEN,
    )
    assert not pull(catalog, instance).success
    assert "holds an object with properties 'id', 'sku'" in catalog.log()[0]["message"]


def test_connection_deleted_before_the_run_fails_cleanly(
    catalog: FileCatalog, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    add_source_connection(catalog, third_party)
    catalog.delete_connection("c1")
    result = pull(catalog, instance)
    assert not result.success
    failure = result.get_step_failure_events()[0]
    description = failure.step_failure_data.user_failure_data.description  # type: ignore[union-attr]
    assert description is not None and "connection c1 no longer exists" in description
    assert third_party.seen == [] and catalog.log() == []


def test_duplicate_ref_ids_fail_the_check(
    catalog: FileCatalog, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    # refId from the colour: three values over 40 records
    add_source_connection(
        catalog, third_party, schema_map={**SCHEMA_MAP, "refId": "attributes.color"}
    )
    result = pull(catalog, instance)
    assert result.success
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert checks["required_properties_present"].passed
    assert not checks["ref_ids_unique"].passed
    assert checks["ref_ids_unique"].metadata["duplicate_ref_ids"].value == 3


def test_refused_address_is_logged(
    catalog: FileCatalog, third_party: ThirdPartyServer, instance: DagsterInstance
) -> None:
    add_source_connection(catalog, third_party)
    instance.add_dynamic_partitions("connections", ["c1"])
    result = materialize(
        [synced_resource],
        partition_key="c1",
        instance=instance,
        resources={
            "catalog": FileCatalogResource(path=str(catalog.path)),
            "source": SourceClientResource(allow_networks=""),
        },
        raise_on_error=False,
    )
    assert not result.success
    assert "a loopback address" in catalog.log()[0]["message"]
    assert third_party.seen == []
