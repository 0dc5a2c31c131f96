"""Test-wide settings and fixtures: hypothesis runs derandomised in CI so a run is
repeatable, and ten times longer on fresh seeds under `make fuzz`; `store` is a real
DuckDB store in a fresh directory per test."""

import os
from pathlib import Path

import pytest
from cartonize.store import Store
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
# `make fuzz`: fresh examples (seeded by --hypothesis-seed), ten times as many; the tests
# that set their own count scale it by max_examples / 100 (tests.strategies.examples).
settings.register_profile(
    "fuzz",
    deadline=None,
    max_examples=1000,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A migrated DuckDB store under the test's temporary directory."""
    fresh = Store(tmp_path / "data")
    fresh.migrate()
    return fresh
