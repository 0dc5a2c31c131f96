"""The Dagster code location loads, with the pull asset and its schedule sensor."""

from dagster import DefaultSensorStatus, Definitions, DynamicPartitionsDefinition

from pipelines.definitions import defs


def test_defs_load() -> None:
    assert isinstance(defs, Definitions)
    # Resolving the repository validates every asset, job, schedule and sensor.
    repo = defs.get_repository_def()
    assert repo.name
    asset = defs.resolve_assets_def("synced_resource")
    partitions = asset.partitions_def
    assert isinstance(partitions, DynamicPartitionsDefinition) and partitions.name == "connections"
    assert {key.name for key in asset.check_keys} == {
        "required_properties_present",
        "ref_ids_unique",
    }
    sensor = defs.resolve_sensor_def("connection_schedules")
    # Sensors start stopped unless told otherwise; this one must run once deployed.
    assert sensor.default_status is DefaultSensorStatus.RUNNING
    # Scheduled runs are runs of the named pull job, as webhook runs are: targeting the
    # asset made them runs of `__anonymous_asset_job_connection_schedules` in Dagster's UI.
    assert sensor.job_name == "pull_connection"
    jobs = {job.name for job in repo.get_all_jobs()} - {"__ASSET_JOB"}  # Dagster's implicit job
    assert jobs == {"pull_connection"}
    assert set(defs.resources or {}) == {"catalog", "source"}
