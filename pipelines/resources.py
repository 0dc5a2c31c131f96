"""The resources of the pull pipeline: the outbound client and the connection catalog."""

import dataclasses
import os

from cartonize.sync.catalog import ConnectionCatalog
from cartonize.sync.egress import AddressPolicy
from cartonize.sync.fetch import FetchSettings, SourceClient
from cartonize.sync.store_catalog import StoreCatalog
from dagster import ConfigurableResource

__all__ = ["ConnectionCatalogResource", "SourceClientResource", "StoreCatalogResource"]


class SourceClientResource(ConfigurableResource):  # type: ignore[type-arg]
    """The outbound pull client; unset fields keep the CARTONIZE_SYNC_* environment settings."""

    connect_timeout: float | None = None
    read_timeout: float | None = None
    total_timeout: float | None = None
    max_bytes: int | None = None
    max_attempts: int | None = None
    max_records: int | None = None
    #: Comma-separated host names allowed even at non-public addresses.
    allow_hosts: str | None = None
    #: Comma-separated CIDR networks allowed even though not public.
    allow_networks: str | None = None

    def settings(self) -> FetchSettings:
        """The environment's settings with this resource's fields laid over them."""
        base = FetchSettings.from_env()
        changes: dict[str, object] = {
            name: value
            for name in (
                "connect_timeout",
                "read_timeout",
                "total_timeout",
                "max_bytes",
                "max_attempts",
                "max_records",
            )
            if (value := getattr(self, name)) is not None
        }
        if self.allow_hosts is not None or self.allow_networks is not None:
            changes["policy"] = AddressPolicy.parse(
                self.allow_hosts
                if self.allow_hosts is not None
                else ",".join(base.policy.allow_hosts),
                self.allow_networks
                if self.allow_networks is not None
                else ",".join(str(n) for n in base.policy.allow_networks),
            )
        return dataclasses.replace(base, **changes)  # type: ignore[arg-type]

    def client(self) -> SourceClient:
        """A new client (close it, or use it as a context manager)."""
        return SourceClient(self.settings())


class ConnectionCatalogResource(ConfigurableResource):  # type: ignore[type-arg]
    """Where the pipeline finds connections; subclasses bind `open` to a store."""

    def open(self) -> ConnectionCatalog:
        """The catalog to use for one sensor tick or one run."""
        raise NotImplementedError


class StoreCatalogResource(ConnectionCatalogResource):
    """The service's own store under CARTONIZE_DATA_DIR."""

    #: The store's directory; None reads CARTONIZE_DATA_DIR. (A resource without fields
    #: also trips a pydantic deprecation warning inside dagster 1.13.)
    data_dir: str | None = None

    def open(self) -> ConnectionCatalog:
        """The store's catalog; CatalogUnavailable when the store cannot be opened."""
        data_dir = self.data_dir or os.environ.get("CARTONIZE_DATA_DIR") or "data"
        return StoreCatalog.for_data_dir(data_dir)
