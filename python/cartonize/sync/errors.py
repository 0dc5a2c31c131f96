"""Why a pull failed: one exception per cause, each with a message fit for the connection log.

Messages name the source by its redacted URL (no query string, no user info), since a query
string may carry a credential and the connection log is shown in the console.
"""

from __future__ import annotations

from typing import Self

__all__ = [
    "DestinationRefused",
    "InvalidSourceJson",
    "PullError",
    "RecordsNotFound",
    "RedirectRefused",
    "ResponseTooLarge",
    "SourceConfigError",
    "SourceHttpError",
    "SourceTimeout",
    "SourceUnreachable",
]


class PullError(Exception):
    """Root of every pull failure; `message` is what the connection log shows."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def noted(self, note: str) -> Self:
        """This error with `note` appended in parentheses (e.g. how many attempts)."""
        self.message = f"{self.message} ({note})"
        self.args = (self.message,)
        return self


class SourceConfigError(PullError):
    """The connection's URL or headers template cannot be used; fix the connection."""


class DestinationRefused(PullError):
    """The source's address is not public and the operator has not allowlisted it."""


class SourceUnreachable(PullError):
    """No connection could be made, or it broke, on every attempt."""


class SourceTimeout(PullError):
    """The source was too slow: a read stalled, or the whole pull passed its time limit."""


class SourceHttpError(PullError):
    """The source answered with a status that is not success (after retries, if retryable)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class RedirectRefused(PullError):
    """The source redirected to another host (or from HTTPS to HTTP), or too many times."""


class ResponseTooLarge(PullError):
    """The response body passed the size cap; reading stopped there."""


class InvalidSourceJson(PullError):
    """The response body is not JSON."""


class RecordsNotFound(PullError):
    """The Schema Root Path does not lead to an array of records in the response."""
