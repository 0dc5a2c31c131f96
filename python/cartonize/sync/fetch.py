"""The outbound pull: GET a connection's Third-Party API URL and return its records.

`SourceClient.fetch` renders the headers template, connects only to allowed addresses
(`egress`), caps connect, read and total time and the response size, retries connection
errors, 429 and 5xx with capped exponential backoff and jitter (never sooner than a
`Retry-After`), follows redirects only within the same host, and takes the array at the
Schema Root Path. Every failure is a `PullError` whose message is fit for the connection log:
the credentials the pull sends (key, token, secret-looking header and query values) are cut
out of it, since a source may echo them in an error body. Sleeping and the clock are
injected so tests run the real server without real waits.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import httpx

from cartonize import jsontext
from cartonize.sync.egress import (
    AddressPolicy,
    Deadline,
    Resolver,
    guarded_transport,
    resolve_host,
)
from cartonize.sync.errors import (
    InvalidSourceJson,
    PullError,
    RecordsNotFound,
    RedirectRefused,
    ResponseTooLarge,
    SourceConfigError,
    SourceHttpError,
    SourceTimeout,
    SourceUnreachable,
)
from cartonize.sync.headers import HeadersTemplateError, render_headers

__all__ = [
    "FetchSettings",
    "FetchedRecords",
    "SourceClient",
    "SourceRequest",
    "extract_records",
    "redact_url",
]

_MIB = 1024 * 1024


@dataclass(frozen=True)
class FetchSettings:
    """Operator limits on every pull; `from_env` reads them from CARTONIZE_SYNC_* settings."""

    connect_timeout: float = 10.0
    #: Longest wait for the next bytes of a response.
    read_timeout: float = 30.0
    #: Whole pull, retries and waits included.
    total_timeout: float = 300.0
    max_bytes: int = 64 * _MIB
    max_attempts: int = 5
    backoff_base: float = 1.0
    backoff_cap: float = 30.0
    #: A `Retry-After` longer than this fails the pull instead of waiting.
    retry_after_max: float = 120.0
    max_redirects: int = 5
    #: Most records one pull takes. Within the byte cap, 64 MiB of `{},` is 22 million
    #: records: gigabytes once parsed and minutes of mapping, on a machine shared with the API.
    max_records: int = 1_000_000
    policy: AddressPolicy = field(default_factory=AddressPolicy)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FetchSettings:
        """Settings from the environment; unset names keep their defaults."""
        env = os.environ if environ is None else environ

        def number(name: str, default: float) -> float:
            raw = env.get(f"CARTONIZE_SYNC_{name}", "").strip()
            if not raw:
                return default
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"CARTONIZE_SYNC_{name}={raw!r} is not a number") from None
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"CARTONIZE_SYNC_{name} must be a positive number")
            return value

        defaults = cls()
        return cls(
            connect_timeout=number("CONNECT_TIMEOUT", defaults.connect_timeout),
            read_timeout=number("READ_TIMEOUT", defaults.read_timeout),
            total_timeout=number("TOTAL_TIMEOUT", defaults.total_timeout),
            max_bytes=int(number("MAX_BYTES", defaults.max_bytes)),
            max_attempts=int(number("MAX_ATTEMPTS", defaults.max_attempts)),
            backoff_base=number("BACKOFF_BASE", defaults.backoff_base),
            backoff_cap=number("BACKOFF_CAP", defaults.backoff_cap),
            retry_after_max=number("RETRY_AFTER_MAX", defaults.retry_after_max),
            max_redirects=int(number("MAX_REDIRECTS", defaults.max_redirects)),
            max_records=int(number("MAX_RECORDS", defaults.max_records)),
            policy=AddressPolicy.parse(
                env.get("CARTONIZE_SYNC_ALLOW_HOSTS"), env.get("CARTONIZE_SYNC_ALLOW_NETWORKS")
            ),
        )


@dataclass(frozen=True)
class SourceRequest:
    """What one pull needs from a connection (credentials already decrypted)."""

    url: str
    headers_template: str | None = None
    api_key: str | None = None
    api_token: str | None = None
    root_path: str | None = None


@dataclass(frozen=True)
class FetchedRecords:
    """The records of one pull and how getting them went (for run metadata and the log)."""

    records: list[Any]
    #: The URL that answered, redacted (no query string or user info).
    url: str
    status: int
    bytes_read: int
    attempts: int
    seconds: float


class SourceClient:
    """Pulls from third-party sources under `FetchSettings`; use as a context manager."""

    def __init__(
        self,
        settings: FetchSettings | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        rng: random.Random | None = None,
        resolver: Resolver = resolve_host,
    ) -> None:
        self.settings = settings or FetchSettings.from_env()
        self._sleep = sleep
        self._clock = clock
        self._now = now
        self._rng = rng or random.Random()
        s = self.settings
        #: When the running pull must end, in real monotonic time (the sockets obey it).
        self._deadline = Deadline()
        self._client = httpx.Client(
            transport=guarded_transport(s.policy, resolver, deadline=self._deadline),
            timeout=httpx.Timeout(
                connect=s.connect_timeout,
                read=s.read_timeout,
                write=s.read_timeout,
                pool=s.connect_timeout,
            ),
            follow_redirects=False,
            trust_env=False,
            headers={"Accept": "application/json", "User-Agent": "cartonize-sync"},
        )

    def __enter__(self) -> SourceClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

    def fetch(self, source: SourceRequest) -> FetchedRecords:
        """GET the source (with retries) and return the array at its root path."""
        secrets = _secrets_of(source)
        try:
            return self._fetch(source, secrets)
        except PullError as exc:
            exc.message = _scrub(exc.message, secrets)
            exc.args = (exc.message,)
            raise
        finally:
            self._deadline.at = None

    def _fetch(self, source: SourceRequest, secrets: list[str]) -> FetchedRecords:
        try:
            headers = render_headers(source.headers_template, source.api_key, source.api_token)
        except HeadersTemplateError as exc:
            raise SourceConfigError(f"{exc.field}: {exc.message}") from None
        url = _source_url(source.url)
        start = self._clock()
        deadline = start + self.settings.total_timeout
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            # The sockets keep to the same limit in real time (the clock may be a test's).
            self._deadline.at = time.monotonic() + max(0.0, deadline - self._clock())
            try:
                status, body, final_url, response_headers = self._get(url, headers, deadline)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                failure: PullError = SourceUnreachable(
                    f"cannot connect to {redact_url(url)}: {_describe(exc)}"
                )
            else:
                if 200 <= status < 300:
                    document = _parse_json(body, final_url, response_headers)
                    records = extract_records(document, source.root_path)
                    if len(records) > self.settings.max_records:
                        raise ResponseTooLarge(
                            f"{redact_url(final_url)} sent {len(records):,} records, more than "
                            f"the {self.settings.max_records:,} a pull takes "
                            "(CARTONIZE_SYNC_MAX_RECORDS); nothing was written"
                        )
                    return FetchedRecords(
                        records=records,
                        url=redact_url(final_url),
                        status=status,
                        bytes_read=len(body),
                        attempts=attempt,
                        seconds=self._clock() - start,
                    )
                failure = SourceHttpError(_status_message(status, final_url, body, secrets), status)
                if not _retryable(status):
                    raise failure
                retry_after = _retry_after(response_headers.get("retry-after"), self._now())
            if attempt >= self.settings.max_attempts:
                raise failure.noted(f"gave up after {attempt} attempts")
            if retry_after is not None and retry_after > self.settings.retry_after_max:
                raise failure.noted(
                    f"the source asked to retry after {retry_after:g} s, longer than the "
                    f"{self.settings.retry_after_max:g} s this service waits"
                )
            delay = self.backoff(attempt)
            if retry_after is not None:
                delay = max(delay, retry_after)
            if self._clock() + delay > deadline:
                raise failure.noted(
                    f"gave up after {attempt} attempts: the next retry would pass the "
                    f"{self.settings.total_timeout:g} s limit of a pull"
                )
            self._sleep(delay)

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based): capped, half jittered."""
        ceiling = min(self.settings.backoff_cap, self.settings.backoff_base * 2.0 ** (attempt - 1))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _get(
        self, url: httpx.URL, headers: dict[str, str], deadline: float
    ) -> tuple[int, bytes, httpx.URL, httpx.Headers]:
        """One attempt: GET `url`, following same-host redirects, reading at most the cap."""
        for _hop in range(self.settings.max_redirects + 1):
            try:
                with self._client.stream("GET", url, headers=headers) as response:
                    if response.is_redirect:
                        url = _redirect_target(url, response)
                        continue
                    limit = self.settings.max_bytes if response.is_success else 2048
                    body = self._read_capped(response, limit, deadline, strict=response.is_success)
                    return response.status_code, body, url, response.headers
            except httpx.TimeoutException as exc:
                if self._clock() >= deadline:
                    raise SourceTimeout(
                        f"{redact_url(url)} was still sending after the "
                        f"{self.settings.total_timeout:g} s limit of a pull"
                    ) from None
                if isinstance(exc, httpx.ConnectTimeout):
                    raise
                raise SourceTimeout(
                    f"{redact_url(url)} sent nothing for {self.settings.read_timeout:g} s "
                    "(read timeout)"
                ) from None
            except httpx.DecodingError as exc:
                raise InvalidSourceJson(
                    f"{redact_url(url)} sent a body that its Content-Encoding does not "
                    f"decode: {_describe(exc)}"
                ) from None
            except httpx.RemoteProtocolError as exc:
                if str(exc).startswith("Invalid URL in location header"):
                    raise RedirectRefused(
                        f"{redact_url(url)} redirected to an invalid address: {_describe(exc)}"
                    ) from None
                raise SourceUnreachable(
                    f"the connection to {redact_url(url)} broke: {_describe(exc)}"
                ) from None
            except (httpx.ReadError, httpx.WriteError) as exc:
                raise SourceUnreachable(
                    f"the connection to {redact_url(url)} broke: {_describe(exc)}"
                ) from None
            except (httpx.ConnectError, httpx.ConnectTimeout):
                raise
            except httpx.HTTPError as exc:
                # Anything else httpx raises is still a failed pull, logged like the others.
                raise SourceUnreachable(
                    f"the request to {redact_url(url)} failed: {type(exc).__name__}: "
                    f"{_describe(exc)}"
                ) from None
        raise RedirectRefused(
            f"{redact_url(url)}: more than {self.settings.max_redirects} redirects"
        )

    def _read_capped(
        self, response: httpx.Response, limit: int, deadline: float, *, strict: bool
    ) -> bytes:
        """The (decoded) body, stopping at `limit` bytes: an error if `strict`, else cut."""
        declared = response.headers.get("content-length")
        if strict and declared is not None and declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(
                f"{redact_url(response.url)} announced {int(declared):,} bytes, more than the "
                f"{limit:,} byte limit (CARTONIZE_SYNC_MAX_BYTES)"
            )
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > limit:
                if not strict:
                    return bytes(body[:limit])
                raise ResponseTooLarge(
                    f"{redact_url(response.url)} sent more than the {limit:,} byte limit "
                    "(CARTONIZE_SYNC_MAX_BYTES); reading stopped there"
                )
            if self._clock() > deadline:
                raise SourceTimeout(
                    f"{redact_url(response.url)} was still sending after the "
                    f"{self.settings.total_timeout:g} s limit of a pull"
                )
        return bytes(body)


def extract_records(document: Any, root_path: str | None) -> list[Any]:
    """The array at `root_path` (dot notation; blank = the document itself).

    At each step the longest run of segments that is a key wins, so a source key that
    itself contains a dot ("data.v2") is still found. Anything but an array at the end is a
    `RecordsNotFound` saying what was there instead.
    """
    path = (root_path or "").strip()
    if not path:
        if isinstance(document, list):
            return document
        raise RecordsNotFound(
            f"the response is {_describe_json(document)}, not an array of records; "
            f"{_root_hint(document)}"
        )
    segments = path.split(".")
    node = document
    walked: list[str] = []
    while segments:
        if not isinstance(node, dict):
            where = ".".join(walked) or "the top level"
            raise RecordsNotFound(
                f"Schema Root Path {path!r}: {where} is {_describe_json(node)}, "
                f"so it has no property {segments[0]!r}"
            )
        for take in range(len(segments), 0, -1):
            key = ".".join(segments[:take])
            if isinstance(node, jsontext.RepeatedKeys) and key in node.own:
                where = ".".join(walked) or "the top level"
                raise RecordsNotFound(
                    f"Schema Root Path {path!r}: {where} names {key!r} more than once, with "
                    "different values, so which one holds the records is not clear; the "
                    "source must send each key once"
                )
            if key in node:
                node = node[key]
                walked.append(key)
                segments = segments[take:]
                break
        else:
            where = ".".join(walked) or "the top level"
            raise RecordsNotFound(
                f"Schema Root Path {path!r}: {where} has no property {segments[0]!r} "
                f"(it has {_key_list(node)})"
            )
    if isinstance(node, list):
        return node
    raise RecordsNotFound(
        f"Schema Root Path {path!r} holds {_describe_json(node)}, not an array of records"
    )


def redact_url(url: httpx.URL | str) -> str:
    """`url` without user info and with any query string replaced by `?…`."""
    parsed = httpx.URL(url) if isinstance(url, str) else url
    port = f":{parsed.port}" if parsed.port is not None else ""
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    query = "?…" if parsed.query else ""
    return f"{parsed.scheme}://{host}{port}{parsed.path}{query}"


def _source_url(raw: str) -> httpx.URL:
    try:
        url = httpx.URL(raw.strip())
    except httpx.InvalidURL as exc:
        raise SourceConfigError(f"Third-Party API URL is not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise SourceConfigError(
            "Third-Party API URL must be a full http:// or https:// address with a host"
        )
    return url


def _redirect_target(current: httpx.URL, response: httpx.Response) -> httpx.URL:
    location = response.headers.get("location", "")
    target = current.join(location)
    if target.scheme not in ("http", "https"):
        raise RedirectRefused(
            f"{redact_url(current)} redirected to a {target.scheme or 'schemeless'} address; "
            "only http and https are followed"
        )
    if target.host.lower() != current.host.lower():
        raise RedirectRefused(
            f"{redact_url(current)} redirected to another host ({target.host}); "
            "redirects are followed only within the same host. Set the Third-Party API URL "
            "to the final address instead"
        )
    if current.scheme == "https" and target.scheme != "https":
        raise RedirectRefused(f"{redact_url(current)} redirected from HTTPS to plain HTTP")
    return target


#: Header and query names whose values are credentials (as well as the key and token).
_SECRET_NAME = re.compile(r"auth|key|token|secret|passw|cookie|sig|session|credential", re.I)
#: Shorter values are not cut out of messages: they would cut ordinary words apart.
_SECRET_MIN = 4
_REDACTED = "[redacted]"


def _secrets_of(source: SourceRequest) -> list[str]:
    """The values a pull of `source` sends that must never reach a log, longest first."""
    found: set[str] = {v for v in (source.api_key, source.api_token) if v}
    try:
        headers = render_headers(source.headers_template, source.api_key, source.api_token)
    except HeadersTemplateError:
        headers = {}
    for name, value in headers.items():
        if _SECRET_NAME.search(name):
            found.add(value)
            # "Bearer abc", "Basic dXNlcjpw": the credential alone may be echoed too (the
            # scheme word is no secret).
            found.update(value.split()[1:])
    try:
        url = httpx.URL(source.url.strip())
    except (httpx.InvalidURL, TypeError):
        url = None
    if url is not None:
        found.update(v for k, v in url.params.multi_items() if _SECRET_NAME.search(k))
        if url.password:
            found.add(url.password)
    return sorted((v for v in found if len(v) >= _SECRET_MIN), key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    """`text` with every secret (also as it looks percent-encoded) replaced."""
    for secret in secrets:
        text = text.replace(secret, _REDACTED)
        encoded = str(httpx.QueryParams({"v": secret}))[2:]
        if encoded != secret:
            text = text.replace(encoded, _REDACTED)
    return text


def _retryable(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def _retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), None if absent."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # not "²", which isdigit() takes and float() not
        # More digits than any real delay has are read as a very long one, not infinity.
        return float(text) if len(text) <= 12 else 1e12
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _status_message(status: int, url: httpx.URL, body: bytes, secrets: list[str]) -> str:
    phrase = httpx.codes.get_reason_phrase(status)
    # Scrubbed before it is cut short, so that no secret is left in part.
    snippet = _scrub(body.decode("utf-8", "replace"), secrets).strip().replace("\n", " ")[:200]
    text = f"{redact_url(url)} answered {status} {phrase}".rstrip()
    if status in (401, 403):
        text += "; check the API key, token and headers template"
    return f"{text}: {snippet}" if snippet else text


def _parse_json(body: bytes, url: httpx.URL, headers: httpx.Headers) -> Any:
    try:
        # Records repeating a key with different values are marked, and refused by the
        # mapping like any record it cannot read (docs/sync.md).
        return jsontext.loads(_declared_text(body, headers), strict=False, repeats="mark")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        kind = headers.get("content-type", "no content type")
        where = f" at byte {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        raise InvalidSourceJson(
            f"{redact_url(url)} did not send JSON ({kind}, {len(body):,} bytes): "
            f"{exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason}{where}"
        ) from None


def _declared_text(body: bytes, headers: httpx.Headers) -> str | bytes:
    """The body decoded with the charset its Content-Type declares, when that is not UTF-8
    (JSON should be UTF-8, but older systems send `charset=iso-8859-1` and say so); else
    the bytes, which JSON decoding reads as UTF-8 (or UTF-16/32 by their byte pattern)."""
    for part in headers.get("content-type", "").split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.strip().lower() != "charset":
            continue
        encoding = value.strip().strip('"').lower()
        if encoding in ("", "utf-8", "utf8"):
            return body
        try:
            return body.decode(encoding)
        except LookupError:
            return body
    return body


def _describe(exc: Exception) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def _describe_json(value: Any) -> str:
    if isinstance(value, dict):
        return f"an object with {_key_list(value)}"
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if value is None:
        return "null"
    return f"a number ({value})"


def _key_list(value: dict[str, Any]) -> str:
    if not value:
        return "no properties"
    names = list(value)
    shown = ", ".join(repr(n) for n in names[:8])
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return f"properties {shown}{more}"


def _root_hint(document: Any) -> str:
    if not isinstance(document, dict):
        return "the source must answer with an array or an object holding one"
    arrays = _array_paths(document, "", depth=3)
    if arrays:
        return "set Schema Root Path to the property holding the records: " + ", ".join(
            repr(p) for p in arrays[:5]
        )
    return "no property in it holds an array"


def _array_paths(node: dict[str, Any], prefix: str, depth: int) -> list[str]:
    found: list[str] = []
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, list):
            found.append(path)
        elif isinstance(value, dict) and depth > 1:
            found.extend(_array_paths(value, f"{path}.", depth - 1))
    return found
