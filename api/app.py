"""Falcon WSGI app: `POST /` packs a request; every error leaves in the spec's error shape.

`create_app()` only wires; `get_app()` reads configuration from the environment for gunicorn:

- `CARTONIZE_MAX_BODY_BYTES`: largest accepted request body (default 10 MiB); above: 413.

The endpoint maximum of the pack `timeout` (`CARTONIZE_MAX_TIMEOUT`) is applied by
`cartonize.pack` itself, so the CLI and the endpoint share it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import cartonize
import falcon
from cartonize.errors import CartonizeError, PayloadTooLarge, error_body
from cartonize.models import PackRequest, PackResponse, parse_request

__all__ = ["AppConfig", "PackFn", "PackResource", "create_app", "get_app", "handle_error"]

logger = logging.getLogger(__name__)

PackFn = Callable[[PackRequest], PackResponse]


@dataclass(frozen=True)
class AppConfig:
    """Limits of one deployment of the pack endpoint."""

    max_body_bytes: int = 10 * 1024 * 1024

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> AppConfig:
        """Read the configuration from `CARTONIZE_*` environment variables."""
        default = cls()
        return cls(
            max_body_bytes=int(environ.get("CARTONIZE_MAX_BODY_BYTES", default.max_body_bytes)),
        )


class PackResource:
    """The pack endpoint: a JSON pack request in, a JSON pack response out."""

    def __init__(self, pack_fn: PackFn, config: AppConfig) -> None:
        self._pack = pack_fn
        self._config = config

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Pack the request body; an empty body packs nothing."""
        request = parse_request(self._read_body(req))
        response = self._pack(request)
        resp.content_type = falcon.MEDIA_JSON
        resp.text = response.model_dump_json(by_alias=True, exclude_none=True)

    def _read_body(self, req: falcon.Request) -> bytes:
        limit = self._config.max_body_bytes
        too_large = PayloadTooLarge(details=f"the request body limit is {limit} bytes")
        if req.content_length is not None and req.content_length > limit:
            raise too_large
        # Read one byte past the limit: a chunked body has no Content-Length to trust.
        body: bytes = req.bounded_stream.read(limit + 1)
        if len(body) > limit:
            raise too_large
        return body


def handle_error(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
    """Render any exception as the spec's error body; unexpected ones are logged, not shown."""
    if isinstance(ex, CartonizeError):
        status, body = ex.status, ex.to_body()
    elif isinstance(ex, falcon.HTTPError):
        # Falcon's own errors (unknown route, wrong method) in the same shape.
        status = ex.status_code
        body = error_body(status, ex.title or "error", ex.description)
        resp.set_headers(ex.headers or {})
    else:
        logger.error("unexpected error in %s %s", req.method, req.path, exc_info=ex)
        status, body = 500, error_body(500, "internal error")
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(body)


def create_app(
    pack_fn: PackFn | None = None, config: AppConfig | None = None
) -> falcon.App[falcon.Request, falcon.Response]:
    """Wire the pack endpoint; `pack_fn` defaults to `cartonize.pack`."""
    app = falcon.App()
    app.add_route("/", PackResource(pack_fn or cartonize.pack, config or AppConfig()))
    app.add_error_handler(Exception, handle_error)
    # Falcon registers HTTPError's own renderer by default; the more specific type wins.
    app.add_error_handler(falcon.HTTPError, handle_error)
    return app


def get_app() -> falcon.App[falcon.Request, falcon.Response]:
    """Build the app from environment configuration (the gunicorn entry point)."""
    return create_app(config=AppConfig.from_env())
