"""A real service under gunicorn and a real headless Chromium for the console's tests."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cartonize.serve import api_on_loopback
from cartonize.store import Store
from playwright.sync_api import Browser, Page, sync_playwright

from tests.sync.third_party import ThirdPartyServer

CHROMIUM = Path(os.environ.get("CARTONIZE_CHROMIUM", "/usr/bin/chromium"))
DAGSTER_UI_URL = "http://127.0.0.1:3999"
#: How long a test waits for a pull of a tiny loopback source to finish (ms): a worker's
#: first pull took up to 18 s at a load of 8 on 2 cores (docs/decisions.md, "Pull
#: processes fork"); a Trigger Webhook click is answered within the webhook wait (20 s).
PULL_MS = 30_000


@dataclass(frozen=True)
class Service:
    """The running service: where it answers and the store behind it."""

    base_url: str
    store: Store
    data_dir: Path
    #: DAGSTER_HOME of the service's pull runs.
    dagster_home: Path


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The app under gunicorn (2 workers) on a fresh data directory."""
    with _served(tmp_path_factory.mktemp("console")) as service:
        yield service


#: The path prefix of `prefixed_service`, as a proxy forwarding `/cartonize/...` mounts it.
ROOT_PATH = "/cartonize"


@pytest.fixture(scope="session")
def prefixed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The app under gunicorn (1 worker) mounted under `ROOT_PATH` (gunicorn's
    SCRIPT_NAME), its base URL ending with it. The Trigger Webhook waits only half a
    second, so a pull from a slow source is still running when the editor shows."""
    scratch = tmp_path_factory.mktemp("console-prefixed")
    with _served(
        scratch, workers=1, root_path=ROOT_PATH, env={"CARTONIZE_WEBHOOK_WAIT": "0.5"}
    ) as service:
        yield service


@contextlib.contextmanager
def _served(
    scratch: Path, workers: int = 2, root_path: str = "", env: dict[str, str] | None = None
) -> Iterator[Service]:
    """The app under gunicorn on a fresh data directory in `scratch`, with `env` added."""
    data_dir = scratch / "data"
    store = Store(data_dir)
    store.migrate()
    settings = {
        "CARTONIZE_PACK_FLUSH_SECONDS": "0",
        # The third-party source of the pull tests is on loopback.
        "CARTONIZE_SYNC_ALLOW_HOSTS": "127.0.0.1",
        "DAGSTER_HOME": str(scratch / "dagster"),
        # Where the console links pull runs; no UI runs there in these tests.
        "CARTONIZE_DAGSTER_UI_URL": DAGSTER_UI_URL,
        **(env or {}),
    }
    log = scratch / "gunicorn.log"
    with api_on_loopback(
        data_dir, log, workers=workers, env=settings, root_path=root_path
    ) as base_url:
        yield Service(base_url, store, data_dir, scratch / "dagster")


@pytest.fixture(scope="session")
def third_party() -> Iterator[ThirdPartyServer]:
    """The loopback third-party JSON source (tests/sync/third_party.py)."""
    with ThirdPartyServer() as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright.

    Module scope: Playwright's sync API keeps an event loop in the main thread while it
    runs; stopping it with the console's tests keeps it from leaking into later tests
    (Dagster's in-process runs then warn about an un-awaited loop shutdown)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium package")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (no cookies) at a laptop's screen size."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()
