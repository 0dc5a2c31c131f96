"""Falcon WSGI app of the pack service; every error it answers leaves in the spec's error
shape (requests gunicorn refuses before calling the app do not: docs/operations.md).

`create_app()` only wires injected parts; `get_app()` reads configuration from the
environment for gunicorn:

- `CARTONIZE_DATA_DIR`: directory of the store (default ./data).
- `CARTONIZE_MAX_BODY_BYTES`: largest accepted request body (default 10 MiB); above: 413.
- `CARTONIZE_MAX_ITEMS`: most items one request may pack (default 10000); above: 422.
- `CARTONIZE_ANONYMOUS_DAILY_LIMIT`: unique keyless requests per address and day (10).
- `CARTONIZE_KEY_RATE_LIMIT`: requests per minute per API key (default 0: no limit).
- `CARTONIZE_RETENTION_DAYS`: how long packs are kept (default 30).
- `CARTONIZE_PACK_FLUSH_SECONDS`: how often a worker writes its packs to the store (0.5).
- `CARTONIZE_WEBHOOK_WAIT`: seconds the sync webhook waits for its pull run before answering
  202 with a status URL (default 20).
- `CARTONIZE_DAGSTER_UI_URL`: where browsers reach Dagster's UI (http:// or https://); the
  console then links each pull run in a connection's log to its page. `make run` sets it
  for the UI it starts (`cartonize.serve.dagster_ui_url`); unset, run ids show unlinked.
- `CARTONIZE_WARM_WORKERS`: 1 (default) warms each worker before it serves: every active
  API key cached and one pack run through, so no request pays for either
  (`PackResource.warm`); 0 leaves both to the first requests.

The service may be mounted under a path prefix (gunicorn's `SCRIPT_NAME`, e.g.
`/cartonize` behind a proxy forwarding `/cartonize/...` unchanged): every URL the service
writes (console links, redirects, cookies, `webhookUrl`) stays under it.

The endpoint maximum of the pack `timeout` (`CARTONIZE_MAX_TIMEOUT`) is applied by
`cartonize.pack` itself, so the CLI and the endpoint share it.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import cartonize
import falcon
from cartonize.errors import CartonizeError, TooManyRequests, error_body
from cartonize.service import KeyRing, PackFn, PackLog, PackService, RateLimiter
from cartonize.store import Clock, Store, StoreUnavailable, utc_now
from cartonize.sync.crypto import SecretBox

from api.access_log import AccessLog
from api.connections import (
    ConnectionCredentialsResource,
    ConnectionItemResource,
    ConnectionListResource,
    ConnectionLogResource,
    PlanAccess,
)
from api.console import add_console
from api.library import LibraryCsvResource, LibraryItemResource, LibraryListResource
from api.openapi import DocsResource, OpenApiResource
from api.options_answer import OptionsAnswer
from api.resources import (
    HealthResource,
    Limits,
    PackListResource,
    PackResource,
    ReadyResource,
    StoredPackResource,
)
from api.sync import LazyPullRuns, SyncRestResource, SyncRunResource, SyncWebhookResource

__all__ = ["AppConfig", "PackFn", "create_app", "get_app", "handle_error"]

logger = logging.getLogger(__name__)
ACCESS_LOGGER = "cartonize.access"


@dataclass(frozen=True)
class AppConfig:
    """Limits and settings of one deployment of the pack service."""

    max_body_bytes: int = 10 * 1024 * 1024
    max_items: int = 10_000
    anonymous_daily_limit: int = 10
    key_rate_limit: int = 0
    retention_days: float = 30.0
    # 0 writes each pack before answering (tests, one-off apps); the environment default
    # for gunicorn is 0.5, see `from_env`.
    pack_flush_seconds: float = 0.0
    # Console cookies get the Secure flag; set it when the service is served over HTTPS.
    secure_cookies: bool = False
    # Seconds `GET /sync-api/{id}/webhook` waits for its run before answering 202.
    webhook_wait: float = 20.0
    # Dagster UI's address as browsers reach it ("": unknown, run ids are not linked).
    dagster_ui_url: str = ""
    # Warm the app before it serves (keys cached, one pack run); on for gunicorn's workers
    # (`from_env`), off by default here: tests build many apps.
    warm: bool = False

    def __post_init__(self) -> None:
        url = self.dagster_ui_url
        if url and not url.startswith(("http://", "https://")):
            raise ValueError(
                f"CARTONIZE_DAGSTER_UI_URL must start with http:// or https:// (got {url!r})"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> AppConfig:
        """Read the configuration from `CARTONIZE_*` environment variables."""
        default = cls()

        def get(name: str, value: float) -> str:
            return environ.get(f"CARTONIZE_{name}", str(value))

        return cls(
            max_body_bytes=int(get("MAX_BODY_BYTES", default.max_body_bytes)),
            max_items=int(get("MAX_ITEMS", default.max_items)),
            anonymous_daily_limit=int(get("ANONYMOUS_DAILY_LIMIT", default.anonymous_daily_limit)),
            key_rate_limit=int(get("KEY_RATE_LIMIT", default.key_rate_limit)),
            retention_days=float(get("RETENTION_DAYS", default.retention_days)),
            # Batching is what lets two workers keep up with hundreds of packs a second.
            pack_flush_seconds=float(get("PACK_FLUSH_SECONDS", 0.5)),
            secure_cookies=get("SECURE_COOKIES", 0).lower() in {"1", "true", "yes"},
            webhook_wait=float(get("WEBHOOK_WAIT", default.webhook_wait)),
            dagster_ui_url=environ.get("CARTONIZE_DAGSTER_UI_URL", "").strip().rstrip("/"),
            warm=get("WARM_WORKERS", 1).lower() in {"1", "true", "yes"},
        )


def handle_error(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
    """Render any exception as the spec's error body; unexpected ones are logged, not shown."""
    if isinstance(ex, CartonizeError):
        status, body = ex.status, ex.to_body()
        if isinstance(ex, TooManyRequests):
            resp.set_header("Retry-After", str(ex.retry_after))
    elif isinstance(ex, falcon.HTTPError):
        # Falcon's own errors (unknown route, wrong method) in the same shape.
        status = ex.status_code
        body = error_body(status, ex.title or "error", ex.description)
        resp.set_headers(ex.headers or {})
    elif isinstance(ex, StoreUnavailable):
        logger.error("store unavailable in %s %s", req.method, req.path, exc_info=ex)
        status, body = 503, error_body(503, "service unavailable", "the store is busy; retry")
        resp.set_header("Retry-After", "1")
    else:
        logger.error("unexpected error in %s %s", req.method, req.path, exc_info=ex)
        status, body = 500, error_body(500, "internal error")
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(body)


def create_app(
    pack_fn: PackFn | None = None,
    config: AppConfig | None = None,
    *,
    store: Store,
    clock: Clock = utc_now,
    access_log: logging.Logger | None = None,
) -> falcon.App[falcon.Request, falcon.Response]:
    """Wire the service; `pack_fn` defaults to `cartonize.pack`."""
    config = config or AppConfig()
    log = PackLog(
        store,
        flush_interval=config.pack_flush_seconds,
        retention=timedelta(days=config.retention_days),
        clock=clock,
    )
    keys = KeyRing(store)
    limiter = RateLimiter(
        store,
        clock=clock,
        anonymous_daily_unique=config.anonymous_daily_limit,
        key_requests_per_minute=config.key_rate_limit,
    )
    service = PackService(pack_fn or cartonize.pack, log, clock)
    limits = Limits(max_body_bytes=config.max_body_bytes, max_items=config.max_items)

    app = falcon.App(middleware=[AccessLog(access_log or logging.getLogger(ACCESS_LOGGER))])
    packer = PackResource(service, keys, limiter, limits, store)
    app.add_route("/", packer)
    app.add_route("/packs", PackListResource(log, keys))
    app.add_route("/packs/{pack_uuid}", StoredPackResource(log, keys))
    app.add_route("/openapi.json", OpenApiResource(limits))
    app.add_route("/docs", DocsResource(limits))
    app.add_route("/healthz", HealthResource())
    app.add_route("/readyz", ReadyResource(store))
    box = SecretBox.for_data_dir(store.data_dir)
    runs = LazyPullRuns(store)
    _add_sync_routes(app, store, keys, clock, config, box, runs)
    app.add_error_handler(Exception, handle_error)
    add_console(
        app,
        store=store,
        packer=packer,
        log=log,
        keys=keys,
        box=box,
        runs=runs,
        clock=clock,
        secure_cookies=config.secure_cookies,
        webhook_wait=config.webhook_wait,
        dagster_ui_url=config.dagster_ui_url.rstrip("/"),
    )
    # Falcon registers HTTPError's own renderer by default; the more specific type wins.
    app.add_error_handler(falcon.HTTPError, handle_error)
    app.add_middleware(OptionsAnswer())
    if config.pack_flush_seconds > 0:
        # Queued packs are written when the worker exits (gunicorn ends workers by SystemExit).
        atexit.register(log.close)
    if config.warm:
        started = time.perf_counter()
        cached = packer.warm()
        # gunicorn's error log, where its workers' own lines go.
        logging.getLogger("gunicorn.error").info(
            "warmed: %d API keys cached, one pack run, in %.0f ms",
            cached,
            (time.perf_counter() - started) * 1000,
        )
    return app


def _add_sync_routes(
    app: falcon.App[falcon.Request, falcon.Response],
    store: Store,
    keys: KeyRing,
    clock: Clock,
    config: AppConfig,
    box: SecretBox,
    runs: LazyPullRuns,
) -> None:
    """The resource library, connection management and the sync REST API."""
    access = PlanAccess(store, keys)
    app.add_route("/resources", LibraryListResource(store, keys))
    app.add_route("/resources/{resource_id:int}", LibraryItemResource(store, keys))
    app.add_route("/resources/{resource_id:int}/csv", LibraryCsvResource(store, keys))
    plan = "/plans/{plan_id}/connections"
    app.add_route(plan, ConnectionListResource(access, box, clock))
    app.add_route(plan + "/{connection_id:int}", ConnectionItemResource(access, box, clock))
    app.add_route(
        plan + "/{connection_id:int}/credentials", ConnectionCredentialsResource(access, box, clock)
    )
    app.add_route(plan + "/{connection_id:int}/log", ConnectionLogResource(access))
    app.add_route(
        "/sync-api/{public_api_id}/rest",
        SyncRestResource(store, box, clock, config.max_body_bytes),
    )
    app.add_route(
        "/sync-api/{public_api_id}/webhook",
        SyncWebhookResource(store, box, runs, config.webhook_wait),
    )
    app.add_route("/sync-api/{public_api_id}/runs/{run_id}", SyncRunResource(store, box, runs))


def get_app() -> falcon.App[falcon.Request, falcon.Response]:
    """Build the app from environment configuration (the gunicorn entry point)."""
    access = logging.getLogger(ACCESS_LOGGER)
    if not access.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        access.addHandler(handler)
        access.setLevel(logging.INFO)
        access.propagate = False
    store = Store.from_env()
    store.migrate()
    return create_app(config=AppConfig.from_env(), store=store, access_log=access)
