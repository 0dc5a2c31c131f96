"""Connection pulls as Dagster definitions: one asset partitioned per connection, one sensor.

Connections are rows that change at run time, so they are not code: each is a partition of
the dynamic partitions definition `connections`, and `connection_schedules` (a sensor) adds
and removes those partitions as rows come and go and asks for a run of every due slot. Its
run key is the slot key, so any number of ticks inside one slot make one run, and only the
latest slot is ever asked for, so downtime costs one catch-up run, not a backlog.
"""

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from cartonize.sync.catalog import (
    CatalogUnavailable,
    ConnectionCatalog,
    PullBusy,
    PullSpec,
    PullTrigger,
)
from cartonize.sync.crypto import CredentialError
from cartonize.sync.errors import PullError
from cartonize.sync.schedule import latest_slot, slot_key
from dagster import (
    AddDynamicPartitionsRequest,
    AssetCheckResult,
    AssetCheckSpec,
    AssetExecutionContext,
    DefaultSensorStatus,
    DeleteDynamicPartitionsRequest,
    DynamicPartitionsDefinition,
    Failure,
    MaterializeResult,
    RunRequest,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    asset,
    define_asset_job,
    sensor,
)

from pipelines.resources import ConnectionCatalogResource, SourceClientResource

__all__ = [
    "PARTITIONS",
    "PULL_JOB",
    "SLOT_TAG",
    "TRIGGER_TAG",
    "build_schedule_sensor",
    "connections_partitions",
    "pull_job",
    "synced_resource",
]

#: Run tag naming how the run was started ("schedule" or "webhook").
TRIGGER_TAG = "cartonize/trigger"
#: Run tag holding the slot (UTC, ISO 8601) a scheduled run is for.
SLOT_TAG = "cartonize/slot"
#: The job that pulls one connection (its partition); webhook runs are runs of it.
PULL_JOB = "pull_connection"

#: The dynamic partitions definition: one partition per connection, keyed by its id.
PARTITIONS = "connections"
connections_partitions = DynamicPartitionsDefinition(name=PARTITIONS)

#: Seconds a pull waits beyond the source time limit for another pull of its connection.
LOCK_MARGIN_S = 60.0

REQUIRED_PRESENT = "required_properties_present"
REF_IDS_UNIQUE = "ref_ids_unique"


@asset(
    partitions_def=connections_partitions,
    check_specs=[
        AssetCheckSpec(
            REQUIRED_PRESENT,
            asset="synced_resource",
            description="Every stored row has the required properties of its resource type.",
        ),
        AssetCheckSpec(
            REF_IDS_UNIQUE,
            asset="synced_resource",
            description="No refId is held by more than one stored row.",
        ),
    ],
    description="The resource list a connection's pull writes (one partition per connection).",
)
def synced_resource(
    context: AssetExecutionContext,
    catalog: ConnectionCatalogResource,
    source: SourceClientResource,
) -> MaterializeResult:  # type: ignore[type-arg]
    """Pull the connection's source, write its records, and report what happened."""
    connection_id = context.partition_key
    trigger = pull_trigger(context.run.tags)
    store = catalog.open()
    if _pull_spec(context, store, trigger) is None:
        raise _gone(connection_id)
    # Pulls of one connection run one at a time (a slow older pull committed over a newer
    # one); a pull waits for one whole pull of another run, plus a margin for its write.
    wait = source.settings().total_timeout + LOCK_MARGIN_S
    waiting_since = time.perf_counter()
    try:
        with store.pull_lock(connection_id, wait):
            waited = time.perf_counter() - waiting_since
            if waited >= 1:
                context.log.info(f"waited {waited:.1f} s for another pull of this connection")
            # Read afresh: the connection may have changed (or gone) while this run waited.
            spec = _pull_spec(context, store, trigger)
            if spec is None:
                raise _gone(connection_id)
            started_at = datetime.now(UTC)
            started = time.perf_counter()
            context.log.info(
                f"pulling connection {connection_id} ({spec.name}) for a {trigger} run"
            )
            try:
                with source.client() as client:
                    fetched = client.fetch(spec.source)
            except PullError as exc:
                store.record_failure(
                    connection_id,
                    exc.message,
                    trigger=trigger,
                    at=started_at,
                    run_id=context.run.run_id,
                )
                raise Failure(
                    description=exc.message,
                    metadata={
                        "error": type(exc).__name__,
                        "duration_s": time.perf_counter() - started,
                    },
                    allow_retries=False,
                ) from exc
            context.log.info(
                f"fetched {len(fetched.records):,} records ({fetched.bytes_read:,} bytes) from "
                f"{fetched.url} in {fetched.attempts} attempt(s)"
            )
            outcome = store.import_records(
                connection_id,
                fetched.records,
                trigger=trigger,
                at=started_at,
                run_id=context.run.run_id,
                pulled=spec,
            )
    except PullBusy as exc:
        store.record_failure(
            connection_id,
            str(exc),
            trigger=trigger,
            at=datetime.now(UTC),
            run_id=context.run.run_id,
        )
        raise Failure(description=str(exc), allow_retries=False) from exc
    duration = time.perf_counter() - started
    figures: dict[str, float | int | str] = {
        "records_fetched": len(fetched.records),
        "inserted": outcome.inserted,
        "updated": outcome.updated,
        "rejected": outcome.rejected,
        "duration_s": round(duration, 3),
        "source_url": fetched.url,
        "attempts": fetched.attempts,
        "trigger": trigger,
    }
    for message in outcome.messages[:20]:
        context.log.warning(message)
    if outcome.status != "success" or outcome.resource_id is None:
        raise Failure(
            description="the write did not complete: "
            + ("; ".join(outcome.messages[:3]) or "no reason given"),
            metadata=figures,
            allow_retries=False,
        )
    figures["resource_id"] = str(outcome.resource_id)
    quality = store.resource_quality(outcome.resource_id)
    return MaterializeResult(
        metadata=figures,
        check_results=[
            AssetCheckResult(
                check_name=REQUIRED_PRESENT,
                passed=quality.missing_required == 0,
                metadata={"rows": quality.rows, "rows_missing_required": quality.missing_required},
            ),
            AssetCheckResult(
                check_name=REF_IDS_UNIQUE,
                passed=quality.duplicate_ref_ids == 0,
                metadata={"rows": quality.rows, "duplicate_ref_ids": quality.duplicate_ref_ids},
            ),
        ],
    )


#: The job of every pull run: webhook and console runs, and the sensor's scheduled runs
#: (which, targeting the asset itself, were runs of `__anonymous_asset_job_connection_schedules`).
pull_job = define_asset_job(
    PULL_JOB,
    selection=[synced_resource],
    description="Pull one connection (partition): scheduled, webhook and console runs.",
)


def _pull_spec(
    context: AssetExecutionContext, store: ConnectionCatalog, trigger: PullTrigger
) -> PullSpec | None:
    """The connection's pull spec; a credential that no longer decrypts fails the pull
    with a connection log entry (the console shows the log, not Dagster's)."""
    connection_id = context.partition_key
    try:
        return store.pull_spec(connection_id)
    except CredentialError:
        message = (
            "the stored Third-Party API Key or Token cannot be decrypted: the service's key "
            "file (CARTONIZE_SYNC_KEY_FILE, default sync.key in the data directory) is not "
            "the one they were saved with; restore that file, or enter the Third-Party API "
            "Key and Token again"
        )
        store.record_failure(
            connection_id,
            message,
            trigger=trigger,
            at=datetime.now(UTC),
            run_id=context.run.run_id,
        )
        raise Failure(description=message, allow_retries=False) from None


def _gone(connection_id: str) -> Failure:
    return Failure(
        description=f"connection {connection_id} no longer exists (deleted after this run "
        "was requested) or its account may no longer use connections; nothing was pulled",
        allow_retries=False,
    )


def pull_trigger(tags: Mapping[str, str]) -> PullTrigger:
    """How a run was started: its trigger tag; a run without one was started by hand."""
    return "schedule" if tags.get(TRIGGER_TAG) == "schedule" else "webhook"


def build_schedule_sensor(
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    minimum_interval_seconds: int = 30,
) -> SensorDefinition:
    """The sensor that keeps partitions in step with connections and requests due slots.

    `now` is injected so tests can evaluate it at chosen instants.
    """

    @sensor(
        name="connection_schedules",
        target=pull_job,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description="Registers connections as partitions and requests each due scheduled pull.",
    )
    def connection_schedules(
        context: SensorEvaluationContext, catalog: ConnectionCatalogResource
    ) -> SensorResult | SkipReason:
        try:
            connections = catalog.open().scheduled_connections()
        except CatalogUnavailable as exc:
            return SkipReason(f"connections unavailable: {exc}")
        moment = now()
        known = set(context.instance.get_dynamic_partitions(PARTITIONS))
        current = {c.connection_id for c in connections}
        partition_requests: list[AddDynamicPartitionsRequest | DeleteDynamicPartitionsRequest] = []
        if added := sorted(current - known):
            partition_requests.append(AddDynamicPartitionsRequest(PARTITIONS, added))
        if removed := sorted(known - current):
            partition_requests.append(DeleteDynamicPartitionsRequest(PARTITIONS, removed))
        run_requests: list[RunRequest] = []
        for connection in connections:
            if connection.schedule is None:
                continue
            slot = latest_slot(connection.schedule, moment)
            if slot is None:
                continue
            run_requests.append(
                RunRequest(
                    run_key=slot_key(connection.connection_id, slot),
                    partition_key=connection.connection_id,
                    tags={
                        TRIGGER_TAG: "schedule",
                        SLOT_TAG: slot.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    },
                )
            )
        return SensorResult(
            run_requests=run_requests, dynamic_partitions_requests=partition_requests
        )

    return connection_schedules
