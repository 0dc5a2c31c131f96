"""Falcon middleware: `OPTIONS` answers 204 No Content with its `Allow` header.

Falcon's own `OPTIONS` answer is 200 with an empty body, which the app's default media type
labels `application/json`: a JSON answer that is not JSON. 204 carries no content type.
"""

from __future__ import annotations

from typing import Any

import falcon

__all__ = ["OptionsAnswer"]


class OptionsAnswer:
    """Turns a successful `OPTIONS` answer without a body into 204 No Content."""

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        """Only Falcon's default responder answers `OPTIONS` here, always without a body."""
        if req.method != "OPTIONS" or resp.status_code != 200:
            return
        if resp.text is None and resp.data is None and resp.stream is None:
            resp.status = falcon.HTTP_204
            # A 204 carries no Content-Length (RFC 9110, 8.6).
            resp.delete_header("Content-Length")
