"""The pull client against the real loopback source: auth, retries, limits, redirects, roots."""

from __future__ import annotations

import ipaddress
import random
import re
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from urllib.parse import quote

import pytest
from cartonize.sync.egress import AddressPolicy
from cartonize.sync.errors import (
    DestinationRefused,
    InvalidSourceJson,
    RecordsNotFound,
    RedirectRefused,
    ResponseTooLarge,
    SourceConfigError,
    SourceHttpError,
    SourceTimeout,
    SourceUnreachable,
)
from cartonize.sync.fetch import FetchSettings, SourceClient, SourceRequest, extract_records

from tests.sync.conftest import SkippingClock
from tests.sync.third_party import (
    API_KEY,
    API_TOKEN,
    HEADERS_TEMPLATE,
    ThirdPartyServer,
    make_record,
)

LOOPBACK = AddressPolicy(allow_networks=(ipaddress.ip_network("127.0.0.0/8"),))


def settings(**overrides: object) -> FetchSettings:
    base: dict[str, object] = {"policy": LOOPBACK, "backoff_base": 1.0, "backoff_cap": 8.0}
    base.update(overrides)
    return FetchSettings(**base)  # type: ignore[arg-type]


def request(url: str, root: str | None = None, **changes: str | None) -> SourceRequest:
    fields: dict[str, str | None] = {
        "headers_template": HEADERS_TEMPLATE,
        "api_key": API_KEY,
        "api_token": API_TOKEN,
    }
    fields.update(changes)
    return SourceRequest(url=url, root_path=root, **fields)


@pytest.fixture
def client(skipping_clock: SkippingClock) -> Iterator[SourceClient]:
    with SourceClient(
        settings(), sleep=skipping_clock.sleep, clock=skipping_clock.now, rng=random.Random(7)
    ) as c:
        yield c


def test_pulls_nested_records_with_rendered_auth_headers(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    got = client.fetch(request(third_party.url("/records?n=250&root=data.items"), "data.items"))
    assert got.records == [make_record(i) for i in range(250)]
    assert got.status == 200 and got.attempts == 1 and got.bytes_read > 250 * 100
    (seen,) = third_party.seen
    assert seen.headers["X-Api-Key"] == API_KEY
    assert seen.headers["Authorization"] == f"Bearer {API_TOKEN}"


def test_top_level_array_with_blank_root(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    got = client.fetch(request(third_party.url("/records?n=3"), ""))
    assert [r["id"] for r in got.records] == [0, 1, 2]


def test_wrong_credentials_fail_once_without_retry(
    third_party: ThirdPartyServer, client: SourceClient, skipping_clock: SkippingClock
) -> None:
    with pytest.raises(SourceHttpError) as failure:
        client.fetch(request(third_party.url("/records"), api_token="stale"))
    assert failure.value.status == 401
    assert "401 Unauthorized" in failure.value.message
    assert "check the API key, token and headers template" in failure.value.message
    assert len(third_party.seen) == 1 and skipping_clock.sleeps == []


def test_429_waits_at_least_retry_after_then_succeeds(
    third_party: ThirdPartyServer, client: SourceClient, skipping_clock: SkippingClock
) -> None:
    third_party.fail_next(429, times=2, retry_after="7")
    got = client.fetch(request(third_party.url("/records?n=5")))
    assert len(got.records) == 5 and got.attempts == 3
    assert len(third_party.seen) == 3
    assert len(skipping_clock.sleeps) == 2
    assert all(wait >= 7 for wait in skipping_clock.sleeps)


def test_retry_after_as_http_date(
    third_party: ThirdPartyServer, skipping_clock: SkippingClock
) -> None:
    now = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    third_party.fail_next(
        503, retry_after=format_datetime(now + timedelta(seconds=20), usegmt=True)
    )
    with SourceClient(
        settings(), sleep=skipping_clock.sleep, clock=skipping_clock.now, now=lambda: now
    ) as c:
        c.fetch(request(third_party.url("/records?n=1")))
    assert skipping_clock.sleeps == [pytest.approx(20.0)]


def test_5xx_gives_up_after_max_attempts_with_capped_jittered_backoff(
    third_party: ThirdPartyServer, client: SourceClient, skipping_clock: SkippingClock
) -> None:
    third_party.fail_next(500, times=10)
    with pytest.raises(SourceHttpError) as failure:
        client.fetch(request(third_party.url("/records")))
    assert failure.value.status == 500
    assert "gave up after 5 attempts" in failure.value.message
    assert len(third_party.seen) == 5
    # Ceilings 1, 2, 4, 8 (capped at 8): each wait lies in [ceiling / 2, ceiling].
    for wait, ceiling in zip(skipping_clock.sleeps, [1, 2, 4, 8], strict=True):
        assert ceiling / 2 <= wait <= ceiling
    assert len(set(skipping_clock.sleeps)) == 4  # jittered, not a fixed ladder


def test_retry_after_beyond_the_limit_fails_at_once(
    third_party: ThirdPartyServer, client: SourceClient, skipping_clock: SkippingClock
) -> None:
    third_party.fail_next(429, times=3, retry_after="3600")
    with pytest.raises(SourceHttpError) as failure:
        client.fetch(request(third_party.url("/records")))
    assert "asked to retry after 3600 s" in failure.value.message
    assert len(third_party.seen) == 1 and skipping_clock.sleeps == []


def test_retries_stop_before_passing_the_total_limit(
    third_party: ThirdPartyServer, skipping_clock: SkippingClock
) -> None:
    third_party.fail_next(502, times=10, retry_after="30")
    with (
        SourceClient(
            settings(total_timeout=70.0), sleep=skipping_clock.sleep, clock=skipping_clock.now
        ) as c,
        pytest.raises(SourceHttpError) as failure,
    ):
        c.fetch(request(third_party.url("/records")))
    assert "would pass the 70 s limit" in failure.value.message
    assert skipping_clock.sleeps == [30.0, 30.0]


def test_connection_refused_is_retried_then_reported(
    client: SourceClient, skipping_clock: SkippingClock
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with pytest.raises(SourceUnreachable) as failure:
        client.fetch(request(f"http://127.0.0.1:{closed_port}/records"))
    assert f"cannot connect to http://127.0.0.1:{closed_port}/records" in failure.value.message
    assert "gave up after 5 attempts" in failure.value.message
    assert len(skipping_clock.sleeps) == 4


def test_slow_source_hits_the_read_timeout(
    third_party: ThirdPartyServer, skipping_clock: SkippingClock
) -> None:
    with (
        SourceClient(
            settings(read_timeout=0.3), sleep=skipping_clock.sleep, clock=skipping_clock.now
        ) as c,
        pytest.raises(SourceTimeout) as failure,
    ):
        c.fetch(request(third_party.url("/slow?delay=1.5")))
    assert "sent nothing for 0.3 s" in failure.value.message


def test_trickling_source_hits_the_total_limit(third_party: ThirdPartyServer) -> None:
    with SourceClient(settings(total_timeout=0.3)) as c, pytest.raises(SourceTimeout) as failure:
        c.fetch(request(third_party.url("/trickle?n=2000&chunks=20&pause=0.1")))
    assert "still sending after the 0.3 s limit" in failure.value.message


@pytest.mark.parametrize(
    ("declare", "expected"),
    [("1", "announced 4,999,396 bytes, more than the 20,000"), ("0", "sent more than the 20,000")],
)
def test_oversized_response_stops_at_the_cap(
    third_party: ThirdPartyServer, skipping_clock: SkippingClock, declare: str, expected: str
) -> None:
    with (
        SourceClient(
            settings(max_bytes=20_000), sleep=skipping_clock.sleep, clock=skipping_clock.now
        ) as c,
        pytest.raises(ResponseTooLarge) as failure,
    ):
        c.fetch(request(third_party.url(f"/large?bytes=5000000&declare={declare}")))
    assert expected in failure.value.message
    assert len(third_party.seen) == 1  # not retried


def test_object_where_the_array_should_be(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    with pytest.raises(RecordsNotFound) as failure:
        client.fetch(request(third_party.url("/not-a-list"), "data.items"))
    assert failure.value.message == (
        "Schema Root Path 'data.items' holds an object with properties 'id', 'sku', "
        "not an array of records"
    )


def test_blank_root_on_an_object_suggests_the_arrays(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    with pytest.raises(RecordsNotFound) as failure:
        client.fetch(request(third_party.url("/records?n=2&root=payload.rows"), ""))
    assert "set Schema Root Path to the property holding the records: 'payload.rows'" in (
        failure.value.message
    )


def test_non_json_body(third_party: ThirdPartyServer, client: SourceClient) -> None:
    with pytest.raises(InvalidSourceJson) as failure:
        client.fetch(request(third_party.url("/not-json")))
    assert "did not send JSON (text/html" in failure.value.message


def test_json_nested_too_deeply(third_party: ThirdPartyServer, client: SourceClient) -> None:
    # Python's json raised RecursionError, which no caller expected: the run failed with a
    # traceback instead of saying what the source sent.
    with pytest.raises(InvalidSourceJson) as failure:
        client.fetch(request(third_party.url("/deep?levels=100000")))
    assert "nested too deeply" in failure.value.message


def test_redirect_within_the_host_is_followed(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    target = third_party.url("/records?n=4")
    got = client.fetch(request(third_party.url(f"/redirect?to={target}")))
    assert len(got.records) == 4 and [s.path for s in third_party.seen] == ["/redirect", "/records"]


def test_redirect_to_another_host_is_refused(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    elsewhere = third_party.url("/records", host="localhost")
    with pytest.raises(RedirectRefused) as failure:
        client.fetch(request(third_party.url(f"/redirect?to={elsewhere}")))
    assert "redirected to another host (localhost)" in failure.value.message
    assert [s.path for s in third_party.seen] == ["/redirect"]


def test_redirect_loop_is_cut(third_party: ThirdPartyServer, client: SourceClient) -> None:
    with pytest.raises(RedirectRefused, match="more than 5 redirects"):
        client.fetch(request(third_party.url("/redirect")))  # redirects to itself
    assert len(third_party.seen) == 6


def test_loopback_is_refused_without_the_allowlist(third_party: ThirdPartyServer) -> None:
    with SourceClient(FetchSettings()) as c, pytest.raises(DestinationRefused) as failure:
        c.fetch(request(third_party.url("/records")))
    assert "127.0.0.1, a loopback address" in failure.value.message
    assert third_party.seen == []


def test_connects_to_the_address_it_checked(third_party: ThirdPartyServer) -> None:
    # "source.invalid" exists in no DNS: the pull can only reach the server if the client
    # connects to the address the resolver returned and the policy checked.
    looked_up: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        looked_up.append(host)
        return ["127.0.0.1"]

    with SourceClient(settings(), resolver=resolver) as c:
        got = c.fetch(request(third_party.url("/records?n=2", host="source.invalid")))
    assert len(got.records) == 2 and looked_up == ["source.invalid"]
    assert third_party.seen[0].headers["Host"] == f"source.invalid:{third_party.port}"


def test_every_resolved_address_must_pass(third_party: ThirdPartyServer) -> None:
    with (
        SourceClient(
            FetchSettings(), resolver=lambda host, port: ["93.184.215.14", "10.0.0.7"]
        ) as c,
        pytest.raises(DestinationRefused, match=r"10\.0\.0\.7, a private address"),
    ):
        c.fetch(request(third_party.url("/records", host="mixed.invalid")))


def test_allowlisted_host_name_may_resolve_to_loopback(third_party: ThirdPartyServer) -> None:
    policy = AddressPolicy(allow_hosts=frozenset({"erp.internal"}))
    with SourceClient(FetchSettings(policy=policy), resolver=lambda h, p: ["127.0.0.1"]) as c:
        assert (
            len(c.fetch(request(third_party.url("/records?n=1", host="erp.internal"))).records) == 1
        )
    with (
        SourceClient(FetchSettings(policy=policy), resolver=lambda h, p: ["127.0.0.1"]) as c,
        pytest.raises(DestinationRefused),
    ):
        c.fetch(request(third_party.url("/records?n=1", host="other.internal")))


def test_query_string_stays_out_of_error_messages(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    third_party.fail_next(404)
    with pytest.raises(SourceHttpError) as failure:
        client.fetch(request(third_party.url("/records?access_token=hunter2")))
    assert "hunter2" not in failure.value.message
    assert f"http://127.0.0.1:{third_party.port}/records?… answered 404" in failure.value.message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://example.com/data.json", "must be a full http:// or https:// address"),
        ("/relative/path", "must be a full http:// or https:// address"),
        ("http://erp.example:port/items", "not a valid URL: Invalid port"),
    ],
)
def test_unusable_url_is_a_config_error(client: SourceClient, url: str, expected: str) -> None:
    with pytest.raises(SourceConfigError, match=expected):
        client.fetch(request(url))


def test_bad_headers_template_is_a_config_error(client: SourceClient) -> None:
    with pytest.raises(SourceConfigError, match="API Headers Template: header 'X' uses"):
        client.fetch(request("http://127.0.0.1/", headers_template='{"X": "{{ secret }}"}'))


def test_a_hundred_thousand_records(third_party: ThirdPartyServer, client: SourceClient) -> None:
    got = client.fetch(request(third_party.url("/records?n=100000&root=data"), "data"))
    assert len(got.records) == 100_000
    assert got.records[99_999] == make_record(99_999)


@pytest.mark.parametrize(
    ("document", "root", "expected"),
    [
        ({"a": {"b": [1, 2]}}, "a.b", [1, 2]),
        ({"a.b": [3]}, "a.b", [3]),  # a key that itself holds a dot
        ({"v2.data": {"rows": [4]}}, "v2.data.rows", [4]),
        ([5], "", [5]),
        ([6], None, [6]),
        ({"rows": []}, " rows ", []),
    ],
)
def test_extract_records_finds_the_array(
    document: object, root: str | None, expected: list[int]
) -> None:
    assert extract_records(document, root) == expected


@pytest.mark.parametrize(
    ("document", "root", "message"),
    [
        (
            {"a": 1},
            "b",
            "Schema Root Path 'b': the top level has no property 'b' (it has properties 'a')",
        ),
        (
            {"a": [1]},
            "a.b",
            "Schema Root Path 'a.b': a is an array of 1, so it has no property 'b'",
        ),
        ({"a": "x"}, "a", "Schema Root Path 'a' holds a string ('x'), not an array of records"),
        ("text", "", "the response is a string ('text'), not an array of records"),
        ({"n": 1}, "", "no property in it holds an array"),
        (None, "a", "Schema Root Path 'a': the top level is null, so it has no property 'a'"),
    ],
)
def test_extract_records_says_what_it_found(document: object, root: str, message: str) -> None:
    with pytest.raises(RecordsNotFound) as failure:
        extract_records(document, root)
    assert message in failure.value.message


def test_settings_from_env() -> None:
    got = FetchSettings.from_env(
        {
            "CARTONIZE_SYNC_READ_TIMEOUT": "12.5",
            "CARTONIZE_SYNC_MAX_BYTES": "1048576",
            "CARTONIZE_SYNC_MAX_RECORDS": "5000",
            "CARTONIZE_SYNC_ALLOW_HOSTS": "ERP.internal., wms.lan",
            "CARTONIZE_SYNC_ALLOW_NETWORKS": "127.0.0.0/8, fd00::/8",
        }
    )
    assert got.read_timeout == 12.5 and got.max_bytes == 1_048_576 and got.max_attempts == 5
    assert got.max_records == 5000 and FetchSettings.from_env({}).max_records == 1_000_000
    assert got.policy.allow_hosts == frozenset({"erp.internal", "wms.lan"})
    assert [str(n) for n in got.policy.allow_networks] == ["127.0.0.0/8", "fd00::/8"]
    with pytest.raises(ValueError, match="CARTONIZE_SYNC_CONNECT_TIMEOUT='soon' is not a number"):
        FetchSettings.from_env({"CARTONIZE_SYNC_CONNECT_TIMEOUT": "soon"})
    with pytest.raises(ValueError, match="CARTONIZE_SYNC_ALLOW_NETWORKS"):
        FetchSettings.from_env({"CARTONIZE_SYNC_ALLOW_NETWORKS": "10.0.0.0/33"})


# -- a source that misbehaves the ways a data team meets in production -------------------


@pytest.mark.parametrize("status", [401, 500])
def test_credentials_echoed_by_the_source_stay_out_of_messages(
    third_party: ThirdPartyServer, client: SourceClient, status: int
) -> None:
    # Error pages that repeat the request (headers, query string) put the key, the token
    # and a query-string credential into the message the connection log and Dagster keep.
    with pytest.raises(SourceHttpError) as failure:
        client.fetch(request(third_party.url(f"/echo?status={status}&apikey=q-secret-77")))
    message = failure.value.message
    assert f"answered {status}" in message and "invalid request: GET /echo" in message
    assert "[redacted]" in message
    for secret in (API_KEY, API_TOKEN, "q-secret-77"):
        assert secret not in message
    # Cut short after scrubbing: not even a prefix of a secret is left at the end.
    assert not any(API_TOKEN[:n] in message for n in range(4, len(API_TOKEN)))


def test_a_body_that_does_not_decode_is_a_pull_error(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    # httpx.DecodingError escaped as a non-PullError: the run failed without a log entry.
    with pytest.raises(InvalidSourceJson, match="Content-Encoding does not decode"):
        client.fetch(request(third_party.url("/bad-gzip")))


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("ftp://127.0.0.1/items.json", "redirected to a ftp address"),
        ("file:///etc/passwd", "redirected to a file address"),
        ("http://[::1", "redirected to an invalid address"),
    ],
)
def test_redirects_to_other_schemes_or_broken_addresses_are_refused(
    third_party: ThirdPartyServer, client: SourceClient, location: str, expected: str
) -> None:
    # httpx.UnsupportedProtocol escaped (no log entry); a broken Location said "broke".
    with pytest.raises(RedirectRefused, match=re.escape(expected)):
        client.fetch(request(third_party.url(f"/redirect?to={quote(location)}")))


@pytest.fixture
def slow_headers_port() -> Iterator[int]:
    """A raw source that sends its status line, then a header line every 0.2 s for 4 s
    (bounded, so that a client without the total limit fails the test instead of hanging)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            for _line in range(20):
                if stop.wait(0.2):
                    return
                try:
                    conn.sendall(b"X-Pad: slow\r\n")
                except OSError:
                    return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    server.close()


def test_headers_sent_slowly_end_at_the_total_limit(slow_headers_port: int) -> None:
    # Each header line comes well inside the read timeout, so only the total limit can end
    # the pull; it used to go on (holding the connection's pull lock) while lines came.
    with SourceClient(settings(total_timeout=1.0, read_timeout=5.0)) as c:
        started = time.monotonic()
        with pytest.raises(SourceTimeout) as failure:
            c.fetch(request(f"http://127.0.0.1:{slow_headers_port}/items"))
    assert time.monotonic() - started < 3.0
    assert "was still sending after the 1 s limit of a pull" in failure.value.message


def test_more_records_than_the_cap_fail_before_mapping(
    third_party: ThirdPartyServer, skipping_clock: SkippingClock
) -> None:
    # Small records fit many to the byte cap: 64 MiB of them took gigabytes and minutes.
    with (
        SourceClient(
            settings(max_records=99), sleep=skipping_clock.sleep, clock=skipping_clock.now
        ) as c,
        pytest.raises(ResponseTooLarge) as failure,
    ):
        c.fetch(request(third_party.url("/records?n=100")))
    assert "sent 100 records, more than the 99 a pull takes" in failure.value.message
    with SourceClient(
        settings(max_records=100), sleep=skipping_clock.sleep, clock=skipping_clock.now
    ) as c:
        assert len(c.fetch(request(third_party.url("/records?n=100"))).records) == 100


def test_a_declared_charset_other_than_utf8_is_read(
    third_party: ThirdPartyServer, client: SourceClient
) -> None:
    # An older ERP answering in ISO-8859-1, and saying so, failed every pull as "not JSON".
    got = client.fetch(request(third_party.url("/latin1?declare=1")))
    assert got.records == [{"sku": "Größe-1"}]
    # Undeclared, the bytes are no UTF-8: still a clear failure naming the content type.
    with pytest.raises(InvalidSourceJson, match=r"\(application/json, \d+ bytes\)"):
        client.fetch(request(third_party.url("/latin1")))


@pytest.mark.parametrize(
    ("retry_after", "says"),
    [("9" * 400, "longer than the 120 s"), ("\u00b2", None), ("3\u00b9", None)],
    ids=["huge", "superscript", "mixed"],
)
def test_odd_retry_after_values_neither_crash_nor_say_inf(
    third_party: ThirdPartyServer,
    client: SourceClient,
    skipping_clock: SkippingClock,
    retry_after: str,
    says: str | None,
) -> None:
    # "²" (a latin-1 byte a header may carry) passed str.isdigit() and then float() raised
    # a bare ValueError: the pull failed with no message; 400 nines said "inf s".
    third_party.fail_next(429, times=1, retry_after=retry_after)
    if says is None:  # not a number of seconds: ignored, the usual backoff
        got = client.fetch(request(third_party.url("/records?n=1")))
        assert len(got.records) == 1 and len(skipping_clock.sleeps) == 1
        return
    with pytest.raises(SourceHttpError) as failure:
        client.fetch(request(third_party.url("/records")))
    assert says in failure.value.message and "inf" not in failure.value.message
