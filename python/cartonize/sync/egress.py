"""Which addresses a pull may connect to, enforced where the socket is opened.

A connection's Third-Party API URL is user input, so a pull must not become a way to reach
the service's own network (SSRF). Every TCP connection the pull client opens goes through
`GuardedBackend.connect_tcp`: it resolves the host once, refuses the connection if any
resolved address is not public (private, loopback, link-local such as the cloud metadata
address 169.254.169.254, shared, reserved, multicast or unspecified) unless the operator
allowlists it, and then connects to exactly the address it checked. A name that re-resolves
to another address between check and connect (DNS rebinding) therefore cannot slip through:
there is no second lookup.

Every socket operation also honours the pull's whole time limit (`Deadline`): httpx only
caps each read, so a source that sent its status line and headers a byte at a time, each
byte inside the read timeout, held a pull (and its connection's pull lock) far past
`CARTONIZE_SYNC_TOTAL_TIMEOUT`.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import httpcore
import httpx

from cartonize.sync.errors import DestinationRefused

__all__ = [
    "AddressPolicy",
    "Deadline",
    "GuardedBackend",
    "Resolver",
    "guarded_transport",
    "resolve_host",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: host, port -> the addresses to try, in order.
Resolver = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True)
class AddressPolicy:
    """Public addresses are allowed; others only through the operator's allowlists."""

    #: Host names (case-insensitive, exact) whose addresses are allowed whatever they are.
    allow_hosts: frozenset[str] = frozenset()
    #: Networks allowed even though not public, e.g. 127.0.0.0/8 for tests, 10.2.0.0/16.
    allow_networks: tuple[IPNetwork, ...] = field(default=())

    @classmethod
    def parse(cls, hosts: str | None, networks: str | None) -> AddressPolicy:
        """Build a policy from comma-separated host names and CIDR networks (env values)."""
        host_set = frozenset(
            h.strip().lower().rstrip(".") for h in (hosts or "").split(",") if h.strip()
        )
        nets: list[IPNetwork] = []
        for item in (networks or "").split(","):
            if item.strip():
                try:
                    nets.append(ipaddress.ip_network(item.strip(), strict=False))
                except ValueError as exc:
                    raise ValueError(f"CARTONIZE_SYNC_ALLOW_NETWORKS: {exc}") from None
        return cls(allow_hosts=host_set, allow_networks=tuple(nets))

    def refusal(self, host: str, address: str) -> str | None:
        """Why `host` at `address` may not be contacted, or None when it may."""
        if host.lower().rstrip(".") in self.allow_hosts:
            return None
        ip = _unwrap(ipaddress.ip_address(address.split("%", 1)[0]))
        if any(ip in net for net in self.allow_networks if net.version == ip.version):
            return None
        kind = _non_public_kind(ip)
        if kind is None:
            return None
        article = "an" if kind[0] in "aeiou" else "a"
        return (
            f"{host} resolves to {ip}, {article} {kind} address; pulls may only reach public "
            "addresses unless the operator allowlists the host (CARTONIZE_SYNC_ALLOW_HOSTS) "
            "or its network (CARTONIZE_SYNC_ALLOW_NETWORKS)"
        )


def resolve_host(host: str, port: int) -> list[str]:
    """The addresses of `host` (an IP literal is its own address), without duplicates."""
    try:
        ipaddress.ip_address(host)
        return [host]
    except ValueError:
        pass
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


class Deadline:
    """When the current pull must be over (`time.monotonic()`), or None for no limit.

    The pull client sets `at` before each attempt; every connect, read and write of its
    sockets then waits at most until then, whatever its own timeout.
    """

    def __init__(self) -> None:
        self.at: float | None = None

    def clamp(self, timeout: float | None, error: type[Exception]) -> float | None:
        """`timeout` cut to the time left; `error` when none is left."""
        if self.at is None:
            return timeout
        left = self.at - time.monotonic()
        if left <= 0:
            raise error("the time limit of the pull has passed")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every operation ends by the pull's deadline."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(
            ssl_context, server_hostname, self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> object:
        return self._stream.get_extra_info(info)


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's socket backend, resolving and checking the host before each connect."""

    def __init__(
        self,
        policy: AddressPolicy,
        resolver: Resolver = resolve_host,
        deadline: Deadline | None = None,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._deadline = deadline or Deadline()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Open a connection to a checked address of `host`; TLS still verifies `host`."""
        try:
            addresses = list(self._resolver(host, port))
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        if not addresses:
            raise httpcore.ConnectError(f"{host} has no address")
        # Every address must pass: a name with one public and one private address would
        # otherwise reach the private one whenever the public one fails.
        for address in addresses:
            reason = self._policy.refusal(host, address)
            if reason is not None:
                raise DestinationRefused(reason)
        last_error: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(
                    address,
                    port,
                    self._deadline.clamp(timeout, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
                return _DeadlineStream(stream, self._deadline)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error


def guarded_transport(
    policy: AddressPolicy,
    resolver: Resolver = resolve_host,
    max_connections: int = 4,
    deadline: Deadline | None = None,
) -> httpx.HTTPTransport:
    """An httpx transport whose every connection goes through `GuardedBackend`, its
    socket operations ending by `deadline` (when given).

    Environment proxies are ignored (`trust_env=False`): a proxy would resolve the host
    itself and so bypass the address check.
    """
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx 0.28 does not take a network backend (encode/httpx#3749 proposes it), so the
    # pool it built is replaced by one with the same TLS context and our backend. The
    # egress tests fail if this stops taking effect (loopback would not be refused).
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=5.0,
        http1=True,
        http2=False,
        network_backend=GuardedBackend(policy, resolver, deadline),
    )
    return transport


#: NAT64's well-known prefix (RFC 6052): 64:ff9b::a9fe:a9fe reaches 169.254.169.254
#: through a translator on the way, which may be this network's own.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _unwrap(ip: IPAddress) -> IPAddress:
    # ::ffff:10.0.0.1 reaches 10.0.0.1, and so may a 6to4 (2002:0a00:0001::) or NAT64
    # address carrying it: judge the IPv4 address they carry.
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def _non_public_kind(ip: IPAddress) -> str | None:
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "non-public"
    return None
