"""When a connection's scheduled pulls are due: slots from Start Date & Time and Sync Frequency.

A slot is an instant (UTC) at which a scheduled pull should run. The rules, documented for
users in docs/sync-schedules.md:

- Hourly: every 3,600 seconds of real time from the start instant, so every real hour gets
  one run, whatever the clocks do (a repeated hour runs twice, a skipped hour is not skipped).
- Daily, Weekly, Monthly: at the start's wall-clock time in the connection's time zone, on
  every day, every 7th day, or the start's day of every month. A monthly start on the 29th
  to 31st runs on the last day of shorter months and returns to its day when it exists.
- A wall-clock time that does not exist (a daylight-saving gap) runs at the first instant
  after the gap; one that exists twice (the repeated hour) runs once, at the first occurrence.
- After downtime only the latest missed slot is due (`latest_slot`); `slot_key` names a slot
  so that a run requested twice for it is one run.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "Frequency",
    "ScheduleError",
    "ScheduleSpec",
    "latest_slot",
    "local_to_instant",
    "next_slot",
    "parse_time_zone",
    "slot_key",
    "slots_between",
]

_HOUR = timedelta(hours=1)


class ScheduleError(ValueError):
    """A schedule field cannot be used; `field` names it for a 422 `details`."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Frequency(StrEnum):
    """Sync Frequency as the spec names it."""

    HOURLY = "Hourly"
    DAILY = "Daily"
    WEEKLY = "Weekly"
    MONTHLY = "Monthly"

    @classmethod
    def parse(cls, text: str) -> Frequency:
        """The frequency named `text` (case-insensitive), or ScheduleError listing the four."""
        for member in cls:
            if member.value.lower() == text.strip().lower():
                return member
        raise ScheduleError(
            f"{text!r} is not a sync frequency; use Hourly, Daily, Weekly or Monthly",
            "Sync Frequency",
        )


def parse_time_zone(name: str | None) -> ZoneInfo:
    """The IANA time zone `name` (blank: UTC), or ScheduleError naming the field."""
    if name is None or not name.strip():
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"{name!r} is not an IANA time zone name such as 'Europe/Berlin' or 'UTC'",
            "Time Zone",
        ) from None


@dataclass(frozen=True)
class ScheduleSpec:
    """A connection's schedule: Start Date & Time as local wall time, frequency, time zone."""

    #: Wall-clock start in `time_zone`; an aware datetime is converted to that zone first.
    start: datetime
    frequency: Frequency
    time_zone: str = "UTC"

    @property
    def zone(self) -> ZoneInfo:
        """The time zone the wall-clock times are read in."""
        return parse_time_zone(self.time_zone)

    @property
    def local_start(self) -> datetime:
        """The start as naive wall time in the zone, to the second."""
        start = self.start
        if start.tzinfo is not None:
            start = start.astimezone(self.zone).replace(tzinfo=None)
        return start.replace(microsecond=0)

    def slot(self, k: int) -> datetime:
        """The k-th slot (k = 0 is the start) as an aware UTC datetime."""
        if self.frequency is Frequency.HOURLY:
            return local_to_instant(self.local_start, self.zone) + k * _HOUR
        return local_to_instant(self._wall_time(k), self.zone)

    def _wall_time(self, k: int) -> datetime:
        start = self.local_start
        if self.frequency is Frequency.DAILY:
            return datetime.combine(start.date() + timedelta(days=k), start.time())
        if self.frequency is Frequency.WEEKLY:
            return datetime.combine(start.date() + timedelta(weeks=k), start.time())
        months = start.year * 12 + start.month - 1 + k
        year, month = divmod(months, 12)
        day = min(start.day, calendar.monthrange(year, month + 1)[1])
        return datetime.combine(date(year, month + 1, day), start.time())

    def _estimate(self, instant: datetime) -> int:
        """An index near the last slot at or before `instant` (exact after adjusting)."""
        start = self.local_start
        if self.frequency is Frequency.HOURLY:
            return int((instant - self.slot(0)) // _HOUR)
        local = instant.astimezone(self.zone).replace(tzinfo=None)
        if self.frequency is Frequency.DAILY:
            return (local.date() - start.date()).days
        if self.frequency is Frequency.WEEKLY:
            return (local.date() - start.date()).days // 7
        return (local.year - start.year) * 12 + local.month - start.month


def local_to_instant(wall: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant of naive wall time `wall` in `zone`.

    Ambiguous (repeated) wall times take the first occurrence; nonexistent ones (in a gap)
    take the first instant after the gap, i.e. the moment the clocks jump.
    """
    first = wall.replace(tzinfo=zone, fold=0)
    instant = first.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) == wall:
        return instant  # exists (fold=0 is the first occurrence when it is repeated)
    # In a gap, fold=0 reads the wall time with the offset before the jump and fold=1 with
    # the offset after it; the jump lies between the two instants. Offsets are whole
    # seconds, so bisect on whole seconds: `low` keeps the old offset, `high` has the new.
    ends = sorted([first, wall.replace(tzinfo=zone, fold=1)], key=lambda d: d.timestamp())
    low, high = (int(d.timestamp()) for d in ends)
    before = datetime.fromtimestamp(low, UTC).astimezone(zone).utcoffset()
    while high - low > 1:
        middle = (low + high) // 2
        if datetime.fromtimestamp(middle, UTC).astimezone(zone).utcoffset() == before:
            low = middle
        else:
            high = middle
    return datetime.fromtimestamp(high, UTC)


def latest_slot(spec: ScheduleSpec, now: datetime) -> datetime | None:
    """The last slot at or before `now` (aware), or None before the first slot.

    This is the one slot due after any downtime: earlier missed slots are not run.
    """
    index = _latest_index(spec, _aware(now))
    return None if index is None else spec.slot(index)


def next_slot(spec: ScheduleSpec, now: datetime) -> datetime:
    """The first slot strictly after `now` (aware)."""
    index = _latest_index(spec, _aware(now))
    return spec.slot(0 if index is None else index + 1)


def slots_between(spec: ScheduleSpec, after: datetime, until: datetime) -> list[datetime]:
    """Every slot in (after, until], oldest first (for previews and tests)."""
    slots: list[datetime] = []
    slot = next_slot(spec, after)
    while slot <= _aware(until):
        slots.append(slot)
        slot = next_slot(spec, slot)
    return slots


def slot_key(connection_id: str, slot: datetime) -> str:
    """A stable name of one connection's slot, used as the Dagster run key."""
    return f"{connection_id}@{_aware(slot).astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"


def _latest_index(spec: ScheduleSpec, now: datetime) -> int | None:
    if now < spec.slot(0):
        return None
    index = max(0, spec._estimate(now))
    while index > 0 and spec.slot(index) > now:
        index -= 1
    while spec.slot(index + 1) <= now:
        index += 1
    return index


def _aware(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("schedule instants must be timezone-aware")
    return moment
