"""Fixtures of the sync tests: the loopback third-party source and a clock that never waits."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.sync.third_party import ThirdPartyServer


@pytest.fixture(scope="session")
def _third_party_server() -> Iterator[ThirdPartyServer]:
    with ThirdPartyServer() as server:
        yield server


@pytest.fixture
def third_party(_third_party_server: ThirdPartyServer) -> ThirdPartyServer:
    """The running loopback source, with no scripted failures and an empty request log."""
    _third_party_server.reset()
    return _third_party_server


class SkippingClock:
    """A monotonic clock whose `sleep` records the wait and jumps ahead instead of waiting."""

    def __init__(self) -> None:
        self.offset = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return time.monotonic() + self.offset

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.offset += seconds


@pytest.fixture
def skipping_clock() -> SkippingClock:
    """Backoff waits are recorded, not slept: retry tests hit the real server at full speed."""
    return SkippingClock()
