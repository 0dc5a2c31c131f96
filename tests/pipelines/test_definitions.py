"""The Dagster code location loads."""

from dagster import Definitions

from pipelines.definitions import defs


def test_defs_load() -> None:
    assert isinstance(defs, Definitions)
    # Resolving the repository validates every asset, job, schedule and sensor.
    repo = defs.get_repository_def()
    assert repo.name
