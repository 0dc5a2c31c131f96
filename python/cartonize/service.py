"""The pack service around `pack()`: fingerprints, pack uuids, keys, limits and the pack log.

`pack()` stays a pure function of the request; everything that depends on who asked, when,
or what was asked before lives here, so the CLI and tests can still call `pack()` alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from cartonize import _core
from cartonize.errors import TooManyRequests
from cartonize.models import PackRequest, PackResponse
from cartonize.store import ApiKey, Clock, PackRecord, PackSummary, Store, hash_key, utc_now

__all__ = [
    "RESPONSE_VOLATILE_FIELDS",
    "CanonicalRequest",
    "KeyRing",
    "PackFn",
    "PackLog",
    "PackService",
    "RateLimiter",
    "canonical_json",
    "fingerprint",
    "request_fingerprint",
    "response_fingerprint",
]

logger = logging.getLogger(__name__)

PackFn = Callable[[PackRequest], PackResponse]

#: Response fields that differ between two packs of the same content: left out of the
#: response fingerprint so that equal results have equal fingerprints.
RESPONSE_VOLATILE_FIELDS = frozenset(
    {
        "packTime",
        "renderTime",
        "totalTime",
        "startedAt",
        "packUuid",
        "requestFingerprint",
        "responseFingerprint",
    }
)


#: The same, as `_core.json_texts` takes them.
_VOLATILE_KEYS = sorted(RESPONSE_VOLATILE_FIELDS)


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no whitespace: one text for one content."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def fingerprint(value: Any) -> str:
    """SHA-512 hex of the canonical JSON of `value`."""
    return hashlib.sha512(canonical_json(value)).hexdigest()


def request_wire(request: PackRequest) -> dict[str, Any]:
    """The request as JSON data, defaults filled in; the API key is excluded by the model."""
    data: dict[str, Any] = request.model_dump(mode="json", by_alias=True)
    return data


@dataclass(frozen=True)
class CanonicalRequest:
    """A request's canonical JSON and its fingerprint, computed once: the rate limiter
    needs the fingerprint and the pack log stores the JSON."""

    json: bytes
    fingerprint: str

    @classmethod
    def of(cls, request: PackRequest) -> CanonicalRequest:
        """Defaults are filled in first, so `{}` and `{"usableSpace": 0.85}` are one request."""
        text = canonical_json(request_wire(request))
        return cls(text, hashlib.sha512(text).hexdigest())


def request_fingerprint(request: PackRequest) -> str:
    """Fingerprint of the request's content: two requests that pack alike share it."""
    return CanonicalRequest.of(request).fingerprint


def response_fingerprint(wire: dict[str, Any]) -> str:
    """Fingerprint of a response's wire data without timings, uuid and the fingerprints."""
    return fingerprint({k: v for k, v in wire.items() if k not in RESPONSE_VOLATILE_FIELDS})


_PACK_UUID = re.compile(r"[0-9a-f]{128}")


def new_pack_uuid() -> str:
    """128 hex characters (512 random bits): unguessable, so it can name a keyless pack."""
    return secrets.token_hex(64)


# --------------------------------------------------------------------------- keys


class KeyRing:
    """Verifies API keys against the store, caching hits until any key changes.

    Every request would otherwise open the database. A revocation touches a marker file in
    the data directory; a changed marker empties every process's cache before the next
    lookup, so a revoked key stops working at once, in every worker. `preload` fills the
    cache with every active key at once (a worker does before it serves: the first
    request with each key then opens no database either); a preloaded ring loads them all
    again, in one transaction, on its first lookup after any key changed, rather than one
    key per lookup. Entries are by the key's hash.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._marker: Path = store.keys_changed_marker()
        self._cache: dict[str, ApiKey] = {}
        self._marker_seen: float | None = None
        self._preloaded = False
        self._lock = threading.Lock()

    def verify(self, secret: str) -> ApiKey | None:
        """The active key `secret` is, or None."""
        digest = hash_key(secret)
        with self._lock:
            reload = self._drop_cache_if_keys_changed() and self._preloaded
            cached = self._cache.get(digest)
        if reload:
            # The marker was read first: a change while the keys load drops them again.
            keys = self._store.active_keys()
            with self._lock:
                self._cache.update(keys)
            return keys.get(digest)
        if cached is not None:
            return cached
        key = self._store.find_key(secret)
        if key is not None:
            with self._lock:
                self._cache[digest] = key
        return key

    def preload(self) -> int:
        """Cache every active key (one transaction); returns how many."""
        with self._lock:
            # The marker is read before the keys: a revocation while they load changes
            # it again, and the next lookup drops what was loaded.
            self._drop_cache_if_keys_changed()
        keys = self._store.active_keys()
        with self._lock:
            self._cache.update(keys)
            self._preloaded = True
        return len(keys)

    def _drop_cache_if_keys_changed(self) -> bool:
        """Empty the cache if any key changed since the last look; whether it did."""
        try:
            mtime = self._marker.stat().st_mtime_ns / 1e9
        except FileNotFoundError:
            mtime = 0.0
        if mtime == self._marker_seen:
            return False
        self._cache.clear()
        self._marker_seen = mtime
        return True


# --------------------------------------------------------------------------- limits


class RateLimiter:
    """Request limits kept in the store, so that every worker process counts together.

    Within a day an address's set of requests only grows, so two answers can be cached in
    the process without asking the store again: a request already admitted is admitted
    again, and an address once at its limit stays there. An address at its limit has a set
    that can no longer change, so the worker then reads the whole set once: a repeat of a
    request another worker admitted (or this one before a restart) is still a repeat. Store
    work for keyless traffic is then bounded by the limit per address and day, however
    many repeats are sent.
    """

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock = utc_now,
        anonymous_daily_unique: int = 10,
        key_requests_per_minute: int = 0,
    ) -> None:
        self._store = store
        self._clock = clock
        self.anonymous_daily_unique = anonymous_daily_unique
        self.key_requests_per_minute = key_requests_per_minute
        self._day: date | None = None
        self._admitted: set[tuple[str, str]] = set()
        self._exhausted: set[str] = set()
        self._lock = threading.Lock()

    def admit_anonymous(self, address: str, request_fingerprint: str) -> bool:
        """Count a keyless request from `address`; raise TooManyRequests past the daily limit.
        Returns whether this admission recorded the fingerprint (False: a repeat)."""
        now = self._clock()
        with self._lock:
            if self._day != now.date():
                self._day = now.date()
                self._admitted.clear()
                self._exhausted.clear()
            if (address, request_fingerprint) in self._admitted:
                return False
            exhausted = address in self._exhausted
        scope = f"addr:{address}"
        if not exhausted:
            recorded = self._store.record_unique(
                scope, request_fingerprint, now.date(), self.anonymous_daily_unique
            )
            if recorded != "refused":
                with self._lock:
                    self._admitted.add((address, request_fingerprint))
                return recorded == "added"
            # Refused, so no worker can add to the address's requests today: its admitted
            # ones are all there is to repeat.
            seen = self._store.unique_requests(scope, now.date())
            with self._lock:
                if self._day == now.date():
                    self._admitted.update((address, fp) for fp in seen)
                    self._exhausted.add(address)
        midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), now.tzinfo)
        raise TooManyRequests(
            details=(
                f"requests without an API key are limited to {self.anonymous_daily_unique} "
                "unique requests per day; send a key with 'Authorization: apikey <KEY>'"
            ),
            retry_after=max(1, int((midnight - now).total_seconds() + 0.999)),
        )

    def admit_key(self, key: ApiKey) -> datetime | None:
        """Count a keyed request; raise TooManyRequests past the per-minute limit (0: none).
        Returns the start of the window it was counted in (None: not counted)."""
        limit = self.key_requests_per_minute
        if limit <= 0:
            return None
        now = self._clock()
        window = now.replace(second=0, microsecond=0)
        if self._store.admit_window(f"key:{key.stem}", window, limit):
            return window
        raise TooManyRequests(
            details=f"this key is limited to {limit} requests per minute",
            retry_after=max(1, int((window + timedelta(minutes=1) - now).total_seconds() + 0.999)),
        )

    @contextmanager
    def admitted(self, address: str, fingerprint: str, key: ApiKey | None) -> Iterator[None]:
        """Admit a request (keyless: by address and fingerprint; keyed: by key) for the
        work in the block. A request that does not get its answer hands its admission
        back: a refusal raised there (4xx other than 429, e.g. a check inside `pack()`),
        and a failure of ours (5xx: an internal error, a busy store). A keyless repeat
        hands back nothing: its fingerprint was recorded by the request that first came."""
        day = self._clock().date()
        window = None
        added = False
        if key is None:
            added = self.admit_anonymous(address, fingerprint)
        else:
            window = self.admit_key(key)
        try:
            yield
        except Exception as error:
            if not isinstance(error, TooManyRequests):
                self._hand_back(address, fingerprint, day, key, window, added)
            raise

    def _hand_back(
        self,
        address: str,
        fingerprint: str,
        day: date,
        key: ApiKey | None,
        window: datetime | None,
        added: bool,
    ) -> None:
        try:
            if key is None and added:
                self._release_anonymous(address, fingerprint, day)
            elif key is not None and window is not None:
                self._store.release_window(f"key:{key.stem}", window)
        except Exception:
            # The request's own error is what the client needs; a store too busy to take
            # the admission back costs the caller one request of its limit.
            logger.warning("could not hand back the admission of a failed request", exc_info=True)

    def _release_anonymous(self, address: str, fingerprint: str, day: date) -> None:
        # Only the admission that recorded the fingerprint releases it, so a failed repeat
        # of a request that was packed earlier today does not free that pack's slot.
        self._store.release_unique(f"addr:{address}", fingerprint, day)
        with self._lock:
            self._admitted.discard((address, fingerprint))
            self._exhausted.discard(address)


# --------------------------------------------------------------------------- pack log


@dataclass
class PackLog:
    """Stores every pack; writes are batched because opening the database costs ~20-80 ms.

    With `flush_interval` 0 each pack is written before the response leaves (tests, CLI).
    Otherwise a background thread writes the batch every `flush_interval` seconds, so a pack
    reaches the file at most about that long after its response; `get` waits that long once
    before it reports a pack that another worker may still hold as unknown.

    A search (`find`) cannot tell what is missing, so each worker marks, per account, when
    it last queued one of its packs: a file per worker whose modification time is that
    moment. A search writes this worker's own queued packs of the account at once and waits
    for another worker's only while its mark is younger than one flush interval.

    A worker removes its marks when it closes; a killed one cannot, so a search also
    removes the account's marks left by workers that are gone (`_stale_mark`).
    """

    store: Store
    flush_interval: float = 0.0
    retention: timedelta = timedelta(days=30)
    #: Old packs are deleted during a write at most this often, which keeps writes cheap.
    prune_every: timedelta = timedelta(minutes=1)
    clock: Clock = utc_now
    #: Packs kept while the store cannot be written; beyond it the oldest are dropped,
    #: since a worker that runs out of memory serves nobody.
    max_pending: int = 50_000
    _pending: list[PackRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _flush_lock: threading.Lock = field(default_factory=threading.Lock)
    _wake: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _last_prune: datetime | None = None
    #: Accounts this worker marked as having queued packs: the mark's path and time.
    _marks: dict[int, tuple[Path, float]] = field(default_factory=dict)

    def add(self, record: PackRecord) -> None:
        """Queue `record` for the store (or write it now when not batching)."""
        with self._lock:
            self._pending.append(record)
            if len(self._pending) > self.max_pending:
                dropped = self._pending.pop(0)
                logger.error("pack queue full; pack %s not stored", dropped.pack_uuid[:16])
            self._start_writer()
        if self.flush_interval <= 0:
            self.flush()
        elif record.account_id is not None:
            self._mark_queued(record.account_id)

    def start(self) -> None:
        """Start the background writer when batching (else `add` does on first use)."""
        with self._lock:
            self._start_writer()

    def _start_writer(self) -> None:
        # Started on first use, not at construction: gunicorn forks workers after the
        # app is built, and threads do not survive a fork (a worker's warm-up starts it).
        if self.flush_interval > 0 and (self._thread is None or not self._thread.is_alive()):
            self._thread = threading.Thread(target=self._run, name="pack-log-flush", daemon=True)
            self._thread.start()

    def get(self, pack_uuid: str) -> PackRecord | None:
        """The pack with this uuid: queued here, stored, or flushed by another worker soon."""
        with self._lock:
            for record in self._pending:
                if record.pack_uuid == pack_uuid:
                    return record
        found = self.store.get_pack(pack_uuid)
        # Only a well-formed uuid can be waiting in another worker's batch; waiting for
        # anything else would let junk requests hold a worker.
        if found is None and self.flush_interval > 0 and _PACK_UUID.fullmatch(pack_uuid):
            time.sleep(self.flush_interval + 0.1)
            found = self.store.get_pack(pack_uuid)
        # Pruning runs at most every `prune_every`; an expired pack is gone for readers at once.
        if found is not None and found.created_at < self.clock() - self.retention:
            return None
        return found

    def find(
        self,
        account_id: int,
        *,
        order_id: str | None,
        request_id: str | None,
        limit: int,
        offset: int,
    ) -> list[PackSummary]:
        """The account's packs matching the given identifiers, newest first; like `get`,
        packs past the retention are hidden even before a write prunes them, and packs
        made before the search but still queued in a worker are found."""
        if self.flush_interval > 0:
            self._await_queued(account_id)
        return self.store.find_packs(
            account_id,
            order_id=order_id,
            request_id=request_id,
            limit=limit,
            offset=offset,
            created_since=self.clock() - self.retention,
        )

    def flush(self) -> None:
        """Write every queued pack in one transaction; on failure they stay queued."""
        with self._flush_lock:
            with self._lock:
                batch, self._pending = self._pending, []
            now = self.clock()
            prune = self._last_prune is None or now - self._last_prune >= self.prune_every
            if not batch and not prune:
                return
            try:
                self.store.save_packs(batch, now - self.retention if prune else None)
            except Exception:
                with self._lock:
                    self._pending[:0] = batch
                raise
            if prune:
                self._last_prune = now

    def close(self) -> None:
        """Stop the flush thread and write what is queued."""
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        with self._lock:
            pending = bool(self._pending)
        if pending:
            self.flush()
        for mark, _ in self._marks.values():
            mark.unlink(missing_ok=True)

    def _mark_queued(self, account_id: int) -> None:
        # Named by process and instance: gunicorn forks one app into several workers, and
        # tests run several apps in one process.
        folder = self.store.queued_packs_marks(account_id)
        mark = folder / f"{_HOST}-{os.getpid()}-{id(self):x}"
        now = time.time_ns()
        try:
            try:
                os.utime(mark, ns=(now, now))
            except FileNotFoundError:
                folder.mkdir(parents=True, exist_ok=True)
                mark.touch()
                os.utime(mark, ns=(now, now))
        except OSError:
            # Without the mark a search elsewhere may miss this pack for one flush interval.
            logger.warning("cannot mark queued packs in %s", folder, exc_info=True)
            return
        self._marks[account_id] = (mark, now / 1e9)

    def _await_queued(self, account_id: int) -> None:
        """Write this worker's queued packs of the account; wait (at most one flush
        interval and a margin) for those another worker queued moments ago."""
        wait = self.flush_interval + 0.1
        mine, marked = self._marks.get(account_id, (None, 0.0))
        if time.time() - marked < wait:
            # Also waits for a flush under way, whose batch may hold the account's packs.
            self.flush()
        latest = 0.0
        try:
            with os.scandir(self.store.queued_packs_marks(account_id)) as marks:
                for mark in marks:
                    if mine is not None and mark.name == mine.name:
                        continue
                    try:
                        moment = mark.stat().st_mtime_ns / 1e9
                    except FileNotFoundError:  # a worker that exited
                        continue
                    if _stale_mark(mark.name, moment):
                        # Its packs were written or died with it: nothing to wait for.
                        with contextlib.suppress(OSError):
                            os.unlink(mark.path)
                        continue
                    latest = max(latest, moment)
        except FileNotFoundError:
            return
        delay = min(latest + wait - time.time(), wait)
        if delay > 0:
            time.sleep(delay)

    def _run(self) -> None:
        while not self._wake.wait(self.flush_interval):
            try:
                self.flush()
            except Exception:
                logger.exception("writing packs to the store failed; retrying")


#: This machine's name in the marks of queued packs: a data directory on a shared volume
#: may hold marks of workers elsewhere, whose process ids mean nothing here.
_HOST = socket.gethostname().replace("/", "_") or "host"
#: A mark this old is removed whoever made it: a live worker that queues again makes a
#: new one, and until then the mark makes no search wait (only fresh ones do).
STALE_MARK_SECONDS = 3600.0


def _stale_mark(name: str, moment: float) -> bool:
    """Whether the mark `name` (`<host>-<pid>-<instance>`), last set at `moment`, is
    left over: made on this machine by a process that no longer runs, or an hour old
    (another machine's, an older naming, or a reused process id)."""
    if time.time() - moment > STALE_MARK_SECONDS:
        return True
    host, _, rest = name.rpartition("-")[0].rpartition("-")
    if host != _HOST or not rest.isdigit():
        return False
    pid = int(rest)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: it exists
        return False
    return False


# --------------------------------------------------------------------------- service


class PackService:
    """Packs a request for a caller: stamps fingerprints, uuid and key stem, stores the pack."""

    def __init__(self, pack_fn: PackFn, log: PackLog, clock: Clock = utc_now) -> None:
        self._pack = pack_fn
        self._log = log
        self._clock = clock

    def pack(
        self, request: PackRequest, key: ApiKey | None, canonical: CanonicalRequest
    ) -> tuple[PackResponse, str]:
        """Pack `request` (canonicalised by the caller), record the result, and return the
        response with its JSON text, which is what was stored and is sent as is."""
        started = self._clock()
        pack_uuid = new_pack_uuid()
        response, text = self._answer(request, key, canonical, pack_uuid)
        self._log.add(
            PackRecord(
                pack_uuid=pack_uuid,
                created_at=started,
                account_id=key.account_id if key else None,
                key_stem=response.used_key_stem,
                order_id=request.order_id,
                request_id=request.request_id,
                request_json=canonical.json.decode(),
                response_json=text,
                pack_time=response.pack_time,
                total_time=response.total_time,
            )
        )
        return response, text

    def warm(self, request: PackRequest, canonical: CanonicalRequest) -> None:
        """Pack `request` as `pack` does, storing nothing: the first call of each step
        (the engine, the response models, the fingerprints) builds what later calls reuse,
        so a worker runs it before it serves. Starts the pack log's writer too."""
        self._answer(request, None, canonical, new_pack_uuid())
        self._log.start()

    def _answer(
        self,
        request: PackRequest,
        key: ApiKey | None,
        canonical: CanonicalRequest,
        pack_uuid: str,
    ) -> tuple[PackResponse, str]:
        response = self._pack(request)
        response.used_key_stem = key.stem if key else None
        # One serialisation serves the fingerprint, the store and the HTTP body.
        wire = response.model_dump(mode="json", by_alias=True, exclude_none=True)
        response.request_fingerprint = wire["requestFingerprint"] = canonical.fingerprint
        texts = None
        if "responseFingerprint" not in wire and "packUuid" not in wire:
            texts = _core.json_texts(wire, _VOLATILE_KEYS)
        if texts is None:
            response.response_fingerprint = wire["responseFingerprint"] = response_fingerprint(wire)
            response.pack_uuid = wire["packUuid"] = pack_uuid
            text = json.dumps(wire, ensure_ascii=False, separators=(",", ":"))
            return response, text
        # The body and the fingerprint's canonical text in one pass (each float written
        # once): the same texts as the lines above, the two keys they add last (neither
        # in `wire` yet) appended to the body.
        body, canonical_text = texts
        response.response_fingerprint = hashlib.sha512(canonical_text.encode()).hexdigest()
        response.pack_uuid = pack_uuid
        tail = json.dumps(
            {"responseFingerprint": response.response_fingerprint, "packUuid": pack_uuid},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return response, f"{body[:-1]},{tail[1:]}"
