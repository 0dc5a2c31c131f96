"""The service's embedded DuckDB store: schema, short-lived connections, and every query.

DuckDB lets one process at a time open a database file for writing, and while it does no
other process can open the file at all. Gunicorn workers, the CLI and Dagster runs all share
the file, so every unit of work here opens its own connection under a cross-process file
lock, reads its results completely, commits in one transaction and closes. A lock error
from a process that does not take our lock (an operator's DuckDB shell) is retried a
bounded number of times with jittered backoff.

Opening a connection costs tens of milliseconds, so callers on a hot path batch their
writes (see `cartonize.service.PackLog`) instead of writing once per request.

Later issues add tables by appending a step to `MIGRATIONS`; a step never changes once
released, so every file moves through the same sequence of versions.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal, TypeVar, get_args

import duckdb
import filelock

__all__ = [
    "MIGRATIONS",
    "Account",
    "ApiKey",
    "Clock",
    "PackRecord",
    "PackSummary",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "Tier",
    "hash_key",
    "utc_now",
]

Tier = Literal["free", "premium", "enterprise"]
TIERS: tuple[str, ...] = get_args(Tier)
Clock = Callable[[], datetime]
T = TypeVar("T")

DATABASE_FILE = "cartonize.duckdb"
#: Characters of an API key kept in clear: the spec's `usedKeyStem` length.
KEY_STEM_LENGTH = 10

#: Ordered schema steps; step i brings a file from version i to i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE accounts (
            id INTEGER PRIMARY KEY,
            name VARCHAR NOT NULL UNIQUE,
            plan_id VARCHAR NOT NULL UNIQUE,
            tier VARCHAR NOT NULL CHECK (tier IN ('free', 'premium', 'enterprise')),
            created_at TIMESTAMP NOT NULL
        )""",
        """CREATE TABLE api_keys (
            key_hash VARCHAR PRIMARY KEY,
            stem VARCHAR NOT NULL UNIQUE,
            account_id INTEGER NOT NULL REFERENCES accounts (id),
            name VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            revoked_at TIMESTAMP
        )""",
        """CREATE TABLE packs (
            pack_uuid VARCHAR PRIMARY KEY,
            created_at TIMESTAMP NOT NULL,
            account_id INTEGER,
            key_stem VARCHAR,
            order_id VARCHAR,
            request_id VARCHAR,
            request_json VARCHAR NOT NULL,
            response_json VARCHAR NOT NULL,
            pack_time DOUBLE NOT NULL,
            total_time DOUBLE NOT NULL
        )""",
        "CREATE INDEX packs_created_at ON packs (created_at)",
        "CREATE INDEX packs_order_id ON packs (order_id)",
        "CREATE INDEX packs_request_id ON packs (request_id)",
        # One row per distinct request a client sent on a day: the unique-request limit.
        """CREATE TABLE daily_requests (
            scope VARCHAR NOT NULL,
            day DATE NOT NULL,
            fingerprint VARCHAR NOT NULL,
            PRIMARY KEY (scope, day, fingerprint)
        )""",
        # Fixed-window request counters: the per-key rate limit.
        """CREATE TABLE request_windows (
            scope VARCHAR NOT NULL,
            window_start TIMESTAMP NOT NULL,
            hits INTEGER NOT NULL,
            PRIMARY KEY (scope, window_start)
        )""",
    ),
    # The resource library and sync connections (cartonize.sync). Rows of a resource live
    # in the table of its type; the columns are `cartonize.sync.resources.PROPERTIES`.
    (
        # Accounts whose connections an operator enabled (`accounts enable-connections`).
        """CREATE TABLE connection_grants (
            account_id INTEGER PRIMARY KEY,
            enabled_at TIMESTAMP NOT NULL
        )""",
        """CREATE TABLE resources (
            id INTEGER PRIMARY KEY,
            account_id INTEGER NOT NULL,
            type VARCHAR NOT NULL CHECK (type IN ('items', 'cartons', 'orders')),
            name VARCHAR NOT NULL,
            is_default BOOLEAN NOT NULL,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL
        )""",
        """CREATE TABLE resource_items (
            resource_id INTEGER NOT NULL,
            pos BIGINT NOT NULL,
            "refId" VARCHAR NOT NULL,
            dimensions_x DOUBLE NOT NULL,
            dimensions_y DOUBLE NOT NULL,
            dimensions_z DOUBLE NOT NULL,
            weight DOUBLE,
            name VARCHAR,
            color VARCHAR,
            sequence VARCHAR,
            properties VARCHAR
        )""",
        """CREATE TABLE resource_cartons (
            resource_id INTEGER NOT NULL,
            pos BIGINT NOT NULL,
            "refId" VARCHAR NOT NULL,
            name VARCHAR,
            dimensions_x DOUBLE NOT NULL,
            dimensions_y DOUBLE NOT NULL,
            dimensions_z DOUBLE NOT NULL,
            "weightMax" DOUBLE NOT NULL,
            "weightTare" DOUBLE,
            price BIGINT,
            outer_dimensions_x DOUBLE,
            outer_dimensions_y DOUBLE,
            outer_dimensions_z DOUBLE,
            properties VARCHAR
        )""",
        """CREATE TABLE resource_orders (
            resource_id INTEGER NOT NULL,
            pos BIGINT NOT NULL,
            "orderId" VARCHAR NOT NULL,
            "refId" VARCHAR NOT NULL,
            quantity BIGINT NOT NULL,
            sequence VARCHAR,
            properties VARCHAR
        )""",
        """CREATE TABLE connections (
            id INTEGER PRIMARY KEY,
            account_id INTEGER NOT NULL,
            public_api_id VARCHAR NOT NULL UNIQUE,
            name VARCHAR NOT NULL,
            resource_type VARCHAR NOT NULL,
            base_name VARCHAR NOT NULL,
            resource_to_update INTEGER,
            url VARCHAR,
            api_key_encrypted VARCHAR,
            api_token_encrypted VARCHAR,
            headers_template VARCHAR,
            schema_root_path VARCHAR,
            schema_map VARCHAR NOT NULL,
            start_at TIMESTAMP,
            time_zone VARCHAR NOT NULL,
            frequency VARCHAR,
            dim_conv VARCHAR,
            weight_conv VARCHAR,
            secret_hash VARCHAR NOT NULL,
            secret_stem VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL
        )""",
        """CREATE TABLE connection_log (
            id BIGINT PRIMARY KEY,
            connection_id INTEGER NOT NULL,
            logged_at TIMESTAMP NOT NULL,
            trigger VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            resource_id INTEGER,
            received BIGINT NOT NULL,
            inserted BIGINT NOT NULL,
            updated BIGINT NOT NULL,
            unchanged BIGINT NOT NULL,
            rejected BIGINT NOT NULL,
            messages VARCHAR NOT NULL
        )""",
        "CREATE INDEX connection_log_connection ON connection_log (connection_id, logged_at)",
    ),
    # Pulls run as Dagster runs (pipelines/): the log keeps each one's run id and duration.
    (
        "ALTER TABLE connection_log ADD COLUMN duration_s DOUBLE",
        "ALTER TABLE connection_log ADD COLUMN run_id VARCHAR",
        "CREATE INDEX connection_log_run ON connection_log (run_id)",
    ),
)


#: The largest OFFSET DuckDB takes (a BIGINT). No table holds as many rows, so a page from
#: any larger offset is as empty as one from this: `page_offset` reads them as this one.
OFFSET_MAX = 2**63 - 1


def page_offset(offset: int) -> int:
    """`offset` as DuckDB's OFFSET takes it: past every row, a larger one changes nothing."""
    return min(offset, OFFSET_MAX)


class StoreError(Exception):
    """A store operation the caller asked for cannot be done (unknown name, duplicate)."""


class StoreUnavailable(Exception):
    """The database file stayed locked or unreadable through every retry."""


def _to_db(moment: datetime) -> datetime:
    # Columns are TIMESTAMP holding UTC: TIMESTAMPTZ needs the icu extension, which a
    # machine without network access cannot autoload.
    return moment.astimezone(UTC).replace(tzinfo=None)


def _from_db(value: object) -> datetime:
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC)


def utc_now() -> datetime:
    """The system clock as an aware UTC datetime (the default `Clock`)."""
    return datetime.now(UTC)


def hash_key(secret: str) -> str:
    """SHA-256 hex of an API key; keys carry 192 random bits, so no salt or stretching."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Account:
    """A customer account and its plan."""

    id: int
    name: str
    plan_id: str
    tier: Tier
    created_at: datetime


@dataclass(frozen=True)
class ApiKey:
    """An API key as stored: its stem in clear, never the key itself."""

    stem: str
    account_id: int
    account_name: str
    name: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        """Whether the key still authenticates."""
        return self.revoked_at is None


@dataclass(frozen=True)
class PackRecord:
    """One pack transaction: request and response as JSON text, who asked, how long."""

    pack_uuid: str
    created_at: datetime
    account_id: int | None
    key_stem: str | None
    order_id: str | None
    request_id: str | None
    request_json: str
    response_json: str
    pack_time: float
    total_time: float


@dataclass(frozen=True)
class PackSummary:
    """A row of a pack search: enough to fetch the pack itself."""

    pack_uuid: str
    created_at: datetime
    order_id: str | None
    request_id: str | None
    key_stem: str | None


class Store:
    """The DuckDB file under a data directory, opened per unit of work under a file lock."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        clock: Clock = utc_now,
        lock_timeout: float = 30.0,
        retries: int = 6,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DATABASE_FILE
        self._lock = filelock.FileLock(str(self.path) + ".lock", timeout=lock_timeout)
        self._clock = clock
        self._retries = retries
        self._migrated = False

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Store:
        """The store under `CARTONIZE_DATA_DIR` (default ./data)."""
        env = os.environ if environ is None else environ
        return cls(env.get("CARTONIZE_DATA_DIR", "data"))

    # ------------------------------------------------------------------ connections

    def migrate(self) -> int:
        """Create the file or bring its schema to the latest version; return that version."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"cannot create {self.data_dir}: {exc}") from exc
        with self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = con.execute("SELECT max(version) FROM schema_version").fetchone()
            current = int(row[0]) if row and row[0] is not None else 0
            for step in MIGRATIONS[current:]:
                for statement in step:
                    con.execute(statement)
            if current < len(MIGRATIONS):
                con.execute("INSERT INTO schema_version VALUES (?)", [len(MIGRATIONS)])
            con.execute("COMMIT")
        self._migrated = True
        return len(MIGRATIONS)

    def transaction(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run `work` in one transaction on a fresh connection; commit, or roll back on error."""
        if not self._migrated:
            self.migrate()
        with self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                result = work(con)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
            return result

    def ping(self) -> None:
        """Open the file and run a query; raises StoreUnavailable when that fails."""
        self.transaction(lambda con: con.execute("SELECT 1").fetchall())

    @contextlib.contextmanager
    def _connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        try:
            self._lock.acquire()
        except filelock.Timeout as exc:
            raise StoreUnavailable(f"{self.path} stayed locked") from exc
        except OSError as exc:
            raise StoreUnavailable(f"cannot lock {self.path}: {exc}") from exc
        try:
            con = self._open_with_retry()
            try:
                yield con
            finally:
                con.close()
        finally:
            self._lock.release()

    def _open_with_retry(self) -> duckdb.DuckDBPyConnection:
        delay = 0.05
        for attempt in range(self._retries + 1):
            try:
                # One thread: each unit of work is tiny, and the pool costs startup time.
                return duckdb.connect(str(self.path), config={"threads": 1})
            except duckdb.IOException as exc:
                if attempt == self._retries or "lock" not in str(exc).lower():
                    raise StoreUnavailable(str(exc)) from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ accounts

    def create_account(self, name: str, tier: Tier, plan_id: str | None = None) -> Account:
        """Add an account; its plan id is generated unless given."""
        _check_tier(tier)
        plan = plan_id or f"plan-{secrets.token_hex(6)}"
        now = _to_db(self._clock())

        def insert(con: duckdb.DuckDBPyConnection) -> Account:
            if _account_row(con, name) is not None:
                raise StoreError(f"account {name!r} already exists")
            row = con.execute("SELECT coalesce(max(id), 0) + 1 FROM accounts").fetchone()
            new_id = int(row[0]) if row else 1
            con.execute(
                "INSERT INTO accounts VALUES (?, ?, ?, ?, ?)", [new_id, name, plan, tier, now]
            )
            return Account(new_id, name, plan, tier, _from_db(now))

        return self.transaction(insert)

    def list_accounts(self) -> list[Account]:
        """Every account, by name."""
        rows = self.transaction(
            lambda con: con.execute(
                "SELECT id, name, plan_id, tier, created_at FROM accounts ORDER BY name"
            ).fetchall()
        )
        return [_account(row) for row in rows]

    def set_tier(self, name: str, tier: Tier) -> Account:
        """Move an account to another plan tier."""
        _check_tier(tier)

        def update(con: duckdb.DuckDBPyConnection) -> Account:
            row = _account_row(con, name)
            if row is None:
                raise StoreError(f"no account named {name!r}")
            con.execute("UPDATE accounts SET tier = ? WHERE id = ?", [tier, row[0]])
            return _account((*row[:3], tier, row[4]))

        return self.transaction(update)

    def set_connections_enabled(self, name: str, enabled: bool) -> Account:
        """Let an account use sync connections (an operator's decision), or stop it."""
        now = _to_db(self._clock())

        def update(con: duckdb.DuckDBPyConnection) -> Account:
            row = _account_row(con, name)
            if row is None:
                raise StoreError(f"no account named {name!r}")
            con.execute("DELETE FROM connection_grants WHERE account_id = ?", [row[0]])
            if enabled:
                con.execute("INSERT INTO connection_grants VALUES (?, ?)", [row[0], now])
            return _account(row)

        return self.transaction(update)

    def connections_enabled(self, account_id: int) -> bool:
        """Whether an operator enabled connections for this account."""
        row = self.transaction(
            lambda con: con.execute(
                "SELECT count(*) FROM connection_grants WHERE account_id = ?", [account_id]
            ).fetchone()
        )
        return bool(row and row[0])

    def account_by_plan(self, plan_id: str) -> Account | None:
        """The account of a plan id, if any."""
        row = self.transaction(
            lambda con: con.execute(
                "SELECT id, name, plan_id, tier, created_at FROM accounts WHERE plan_id = ?",
                [plan_id],
            ).fetchone()
        )
        return _account(row) if row else None

    def account_by_id(self, account_id: int) -> Account | None:
        """The account with this id, if any."""
        row = self.transaction(
            lambda con: con.execute(
                "SELECT id, name, plan_id, tier, created_at FROM accounts WHERE id = ?",
                [account_id],
            ).fetchone()
        )
        return _account(row) if row else None

    # ------------------------------------------------------------------ API keys

    def create_key(self, account: str, name: str) -> tuple[ApiKey, str]:
        """Issue a key for `account`; return its record and the key, which is never stored."""
        secret = secrets.token_hex(24)
        now = _to_db(self._clock())

        def insert(con: duckdb.DuckDBPyConnection) -> ApiKey:
            row = _account_row(con, account)
            if row is None:
                raise StoreError(f"no account named {account!r}")
            stem = secret[:KEY_STEM_LENGTH]
            con.execute(
                "INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, NULL)",
                [hash_key(secret), stem, row[0], name, now],
            )
            return ApiKey(stem, int(str(row[0])), str(row[1]), name, _from_db(now), None)

        return self.transaction(insert), secret

    def list_keys(self, account: str | None = None) -> list[ApiKey]:
        """Keys, revoked ones included, optionally of one account."""
        query = _KEY_SELECT + (" WHERE a.name = ?" if account else "") + " ORDER BY k.created_at"
        params = [account] if account else []
        rows = self.transaction(lambda con: con.execute(query, params).fetchall())
        return [_api_key(row) for row in rows]

    def revoke_key(self, stem: str) -> ApiKey:
        """Revoke the key with this stem; it stops authenticating at once."""
        now = _to_db(self._clock())

        def update(con: duckdb.DuckDBPyConnection) -> ApiKey:
            row = con.execute(_KEY_SELECT + " WHERE k.stem = ?", [stem]).fetchone()
            if row is None:
                raise StoreError(f"no key with stem {stem!r}")
            con.execute(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE stem = ?",
                [now, stem],
            )
            key = _api_key(row)
            return key if key.revoked_at else _api_key((*row[:5], now))

        revoked = self.transaction(update)
        self.keys_changed_marker().touch()
        return revoked

    def find_key(self, secret: str) -> ApiKey | None:
        """The active key whose hash matches `secret`, if any."""
        query = _KEY_SELECT + " WHERE k.key_hash = ? AND k.revoked_at IS NULL"
        row = self.transaction(lambda con: con.execute(query, [hash_key(secret)]).fetchone())
        return _api_key(row) if row else None

    def active_keys(self) -> dict[str, ApiKey]:
        """Every active key by its hash (`hash_key`), in one transaction."""
        query = "SELECT k.key_hash, " + _KEY_SELECT.removeprefix("SELECT ")
        query += " WHERE k.revoked_at IS NULL"
        rows = self.transaction(lambda con: con.execute(query).fetchall())
        return {str(row[0]): _api_key(row[1:]) for row in rows}

    def keys_changed_marker(self) -> Path:
        """A file touched whenever keys change, so other processes can drop cached keys."""
        return self.data_dir / "keys.changed"

    def queued_packs_marks(self, account_id: int) -> Path:
        """The folder where each worker marks when it last queued a pack of the account
        (see `cartonize.service.PackLog`)."""
        return self.data_dir / "packs.queued" / str(account_id)

    # ------------------------------------------------------------------ packs

    def save_packs(self, records: Sequence[PackRecord], prune_before: datetime | None) -> None:
        """Store packs in one transaction, first deleting packs made before `prune_before`."""
        cutoff = _to_db(prune_before) if prune_before is not None else None

        def insert(con: duckdb.DuckDBPyConnection) -> None:
            if cutoff is not None:
                con.execute("DELETE FROM packs WHERE created_at < ?", [cutoff])
            if records:
                con.executemany(
                    "INSERT INTO packs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        [
                            r.pack_uuid,
                            _to_db(r.created_at),
                            r.account_id,
                            r.key_stem,
                            r.order_id,
                            r.request_id,
                            r.request_json,
                            r.response_json,
                            r.pack_time,
                            r.total_time,
                        ]
                        for r in records
                    ],
                )

        self.transaction(insert)

    def get_pack(self, pack_uuid: str) -> PackRecord | None:
        """The stored pack with this uuid, if it is (still) there."""
        row = self.transaction(
            lambda con: con.execute(
                "SELECT * FROM packs WHERE pack_uuid = ?", [pack_uuid]
            ).fetchone()
        )
        if row is None:
            return None
        return PackRecord(row[0], _from_db(row[1]), *row[2:])

    def find_packs(
        self,
        account_id: int,
        *,
        order_id: str | None,
        request_id: str | None,
        limit: int,
        offset: int,
        created_since: datetime | None = None,
    ) -> list[PackSummary]:
        """The account's packs matching the given identifiers (and made at or after
        `created_since`, when given), newest first."""
        query = (
            "SELECT pack_uuid, created_at, order_id, request_id, key_stem FROM packs "
            "WHERE account_id = ?"
        )
        params: list[object] = [account_id]
        if created_since is not None:
            query += " AND created_at >= ?"
            params.append(_to_db(created_since))
        for column, value in (("order_id", order_id), ("request_id", request_id)):
            if value is not None:
                query += f" AND {column} = ?"
                params.append(value)
        query += " ORDER BY created_at DESC, pack_uuid LIMIT ? OFFSET ?"
        params += [limit, page_offset(offset)]
        rows = self.transaction(lambda con: con.execute(query, params).fetchall())
        return [PackSummary(row[0], _from_db(row[1]), *row[2:]) for row in rows]

    # ------------------------------------------------------------------ rate limits

    def admit_unique(self, scope: str, fingerprint: str, day: date, limit: int) -> bool:
        """Record a request of `scope` on `day`; False when it is new and `limit` is reached.

        A fingerprint already seen that day is always admitted: it is not a new request.
        """
        return self.record_unique(scope, fingerprint, day, limit) != "refused"

    def record_unique(
        self, scope: str, fingerprint: str, day: date, limit: int
    ) -> Literal["added", "repeat", "refused"]:
        """`admit_unique`, telling an admission that recorded the fingerprint (`added`)
        from one that found it already recorded that day (`repeat`)."""

        def admit(con: duckdb.DuckDBPyConnection) -> Literal["added", "repeat", "refused"]:
            # Yesterday's rows can never matter again; deleting them keeps the table small.
            con.execute("DELETE FROM daily_requests WHERE day < ?", [day])
            seen = con.execute(
                "SELECT count(*), count(*) FILTER (WHERE fingerprint = ?) "
                "FROM daily_requests WHERE scope = ? AND day = ?",
                [fingerprint, scope, day],
            ).fetchone()
            total, repeat = (int(seen[0]), int(seen[1])) if seen else (0, 0)
            if repeat:
                return "repeat"
            if total >= limit:
                return "refused"
            con.execute("INSERT INTO daily_requests VALUES (?, ?, ?)", [scope, day, fingerprint])
            return "added"

        return self.transaction(admit)

    def unique_requests(self, scope: str, day: date) -> frozenset[str]:
        """The fingerprints `admit_unique` recorded for `scope` on `day`."""
        rows = self.transaction(
            lambda con: con.execute(
                "SELECT fingerprint FROM daily_requests WHERE scope = ? AND day = ?", [scope, day]
            ).fetchall()
        )
        return frozenset(str(row[0]) for row in rows)

    def admit_window(self, scope: str, window_start: datetime, limit: int) -> bool:
        """Count a request in the fixed window starting at `window_start`; False past `limit`."""

        def admit(con: duckdb.DuckDBPyConnection) -> bool:
            start = _to_db(window_start)
            con.execute("DELETE FROM request_windows WHERE window_start < ?", [start])
            row = con.execute(
                "SELECT hits FROM request_windows WHERE scope = ? AND window_start = ?",
                [scope, start],
            ).fetchone()
            hits = int(row[0]) if row else 0
            if hits >= limit:
                return False
            con.execute(
                "INSERT OR REPLACE INTO request_windows VALUES (?, ?, ?)",
                [scope, start, hits + 1],
            )
            return True

        return self.transaction(admit)

    def release_unique(self, scope: str, fingerprint: str, day: date) -> None:
        """Forget a request `admit_unique` recorded (it was refused after all)."""
        self.transaction(
            lambda con: con.execute(
                "DELETE FROM daily_requests WHERE scope = ? AND day = ? AND fingerprint = ?",
                [scope, day, fingerprint],
            )
        )

    def release_window(self, scope: str, window_start: datetime) -> None:
        """Take back one request `admit_window` counted in the window (it was refused)."""
        self.transaction(
            lambda con: con.execute(
                "UPDATE request_windows SET hits = hits - 1 "
                "WHERE scope = ? AND window_start = ? AND hits > 0",
                [scope, _to_db(window_start)],
            )
        )


_KEY_SELECT = (
    "SELECT k.stem, k.account_id, a.name, k.name, k.created_at, k.revoked_at "
    "FROM api_keys k JOIN accounts a ON a.id = k.account_id"
)


def _check_tier(tier: str) -> None:
    if tier not in TIERS:
        raise StoreError(f"tier must be one of {', '.join(TIERS)} (got {tier!r})")


def _account_row(con: duckdb.DuckDBPyConnection, name: str) -> tuple[object, ...] | None:
    row = con.execute(
        "SELECT id, name, plan_id, tier, created_at FROM accounts WHERE name = ?", [name]
    ).fetchone()
    return tuple(row) if row else None


def _account(row: Sequence[object]) -> Account:
    account_id, name, plan_id, tier, created_at = row
    return Account(int(str(account_id)), str(name), str(plan_id), _tier(tier), _from_db(created_at))


def _tier(value: object) -> Tier:
    if value == "premium":
        return "premium"
    if value == "enterprise":
        return "enterprise"
    return "free"


def _api_key(row: Sequence[object]) -> ApiKey:
    stem, account_id, account_name, name, created_at, revoked_at = row
    revoked = None if revoked_at is None else _from_db(revoked_at)
    return ApiKey(
        str(stem), int(str(account_id)), str(account_name), str(name), _from_db(created_at), revoked
    )
