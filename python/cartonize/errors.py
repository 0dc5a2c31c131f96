"""The exception tree of the service and the wire shape of its error body."""

from __future__ import annotations

__all__ = [
    "BadRequest",
    "CartonizeError",
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "PayloadTooLarge",
    "TooManyRequests",
    "Unauthorized",
    "error_body",
]


def error_body(status: int, message: str, details: str | None = None) -> dict[str, int | str]:
    """Return the spec's error object; `code` is the HTTP status, `details` only when given."""
    body: dict[str, int | str] = {"code": status, "message": message}
    if details is not None:
        body["details"] = details
    return body


class CartonizeError(Exception):
    """Root of every error the service reports to a client; carries its HTTP status."""

    status: int = 500
    default_message: str = "internal error"

    def __init__(self, message: str | None = None, details: str | None = None) -> None:
        self.message = message or self.default_message
        self.details = details
        super().__init__(self.message if details is None else f"{self.message}: {details}")

    def to_body(self) -> dict[str, int | str]:
        """Return this error as the spec's error object."""
        return error_body(self.status, self.message, self.details)


class BadRequest(CartonizeError):
    """Malformed request: not JSON, or not a JSON object."""

    status = 400
    default_message = "bad request"


class Unauthorized(CartonizeError):
    """Missing or wrong credentials."""

    status = 401
    default_message = "unauthorized"


class Forbidden(CartonizeError):
    """Authenticated, but the account may not do this (e.g. connections not enabled)."""

    status = 403
    default_message = "forbidden"


class Conflict(CartonizeError):
    """The request conflicts with the current state (e.g. deleting a resource in use)."""

    status = 409
    default_message = "conflict"


class NotFound(CartonizeError):
    """The addressed object (a stored pack) does not exist, or is not the caller's."""

    status = 404
    default_message = "not found"


class PayloadTooLarge(CartonizeError):
    """Request body above the configured size limit."""

    status = 413
    default_message = "payload too large"


class InvalidRequest(CartonizeError):
    """Well-formed request with invalid or contradictory parameters."""

    status = 422
    default_message = "invalid request"


class TooManyRequests(CartonizeError):
    """Rate limit exceeded."""

    status = 429
    default_message = "too many requests"

    def __init__(
        self, message: str | None = None, details: str | None = None, retry_after: int = 60
    ) -> None:
        super().__init__(message, details)
        #: Seconds until the limit resets: sent as the `Retry-After` header.
        self.retry_after = retry_after
