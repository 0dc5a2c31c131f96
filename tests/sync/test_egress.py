"""Which addresses a pull may reach, judged by `AddressPolicy`."""

from __future__ import annotations

import ipaddress

import pytest
from cartonize.sync.egress import AddressPolicy, resolve_host

DEFAULT = AddressPolicy()


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata service
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("100.64.0.1", "non-public"),  # carrier-grade NAT
        ("240.0.0.1", "private"),  # reserved, which Python also counts as private
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped IPv6 reaches IPv4 loopback
        ("::ffff:10.0.0.1", "private"),
        ("2002:a9fe:a9fe::1", "link-local"),  # 6to4 carrying 169.254.169.254
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 carrying 127.0.0.1
        ("64:ff9b::a00:1", "private"),
        ("fe80::1%eth0", "link-local"),
    ],
)
def test_non_public_addresses_are_refused(address: str, kind: str) -> None:
    reason = DEFAULT.refusal("source.example", address)
    article = "an" if kind == "unspecified" else "a"
    assert reason is not None and f", {article} {kind} address;" in reason
    assert "CARTONIZE_SYNC_ALLOW_HOSTS" in reason


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "2002:808:808::1", "64:ff9b::808:808"],
)
def test_public_addresses_pass(address: str) -> None:
    assert DEFAULT.refusal("source.example", address) is None


def test_allowlisted_networks_and_hosts() -> None:
    policy = AddressPolicy.parse("ERP.Internal", "10.20.0.0/16, ::1/128")
    assert policy.refusal("x", "10.20.5.5") is None
    assert policy.refusal("x", "10.21.0.1") is not None
    assert policy.refusal("x", "::1") is None
    assert policy.refusal("x", "127.0.0.1") is not None
    assert policy.refusal("erp.internal.", "192.168.0.9") is None
    assert policy.allow_networks[0] == ipaddress.ip_network("10.20.0.0/16")


def test_resolve_host_keeps_literals_and_resolves_names() -> None:
    assert resolve_host("127.0.0.1", 80) == ["127.0.0.1"]
    assert resolve_host("::1", 80) == ["::1"]
    assert "127.0.0.1" in resolve_host("localhost", 80)
