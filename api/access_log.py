"""Falcon middleware writing one JSON line per request: method, path, status, duration, key stem.

Paths are logged without their query string (a key could be in it), and never a key itself:
resources put only the key's stem into `req.context.key_stem`.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

import falcon

__all__ = ["REQUEST_ID_HEADER", "AccessLog"]

REQUEST_ID_HEADER = "X-Request-Id"
# A client's request id is echoed into logs: keep it short and printable.
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class AccessLog:
    """Access-log middleware; also gives every request an id, echoed as `X-Request-Id`."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Start the clock and settle the request id."""
        req.context.started = time.perf_counter()
        given = req.get_header(REQUEST_ID_HEADER) or ""
        req.context.request_id = given if _SAFE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        req.context.key_stem = None
        resp.set_header(REQUEST_ID_HEADER, req.context.request_id)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        """Write the access line once the response is final."""
        started = getattr(req.context, "started", time.perf_counter())
        line = {
            "method": req.method,
            "path": req.path,
            "status": resp.status_code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "key_stem": getattr(req.context, "key_stem", None),
            "request_id": getattr(req.context, "request_id", None),
            "remote_addr": req.remote_addr,
        }
        self._logger.info(json.dumps(line, separators=(",", ":")))
