"""Due slots: frequencies, month ends, daylight saving, downtime, run keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cartonize.sync.schedule import (
    Frequency,
    ScheduleError,
    ScheduleSpec,
    latest_slot,
    local_to_instant,
    next_slot,
    parse_time_zone,
    slot_key,
    slots_between,
)
from hypothesis import given
from hypothesis import strategies as st

NEW_YORK = "America/New_York"
BERLIN = "Europe/Berlin"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc, arg-type]


def local(slots: list[datetime], zone: str) -> list[str]:
    return [s.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z") for s in slots]


@pytest.mark.parametrize(
    ("frequency", "now", "expected"),
    [
        (Frequency.DAILY, utc(2026, 11, 2, 8, 59, 59), None),  # before the start
        (Frequency.DAILY, utc(2026, 11, 2, 9), utc(2026, 11, 2, 9)),  # exactly the start
        (Frequency.DAILY, utc(2026, 11, 3, 8, 59), utc(2026, 11, 2, 9)),
        (Frequency.DAILY, utc(2026, 11, 3, 9), utc(2026, 11, 3, 9)),
        (Frequency.HOURLY, utc(2026, 11, 2, 13, 15), utc(2026, 11, 2, 13)),
        (Frequency.WEEKLY, utc(2026, 11, 15, 23), utc(2026, 11, 9, 9)),
        (Frequency.WEEKLY, utc(2026, 11, 16, 9), utc(2026, 11, 16, 9)),
        (Frequency.MONTHLY, utc(2026, 12, 2, 8), utc(2026, 11, 2, 9)),
        (Frequency.MONTHLY, utc(2027, 3, 2, 9, 0, 1), utc(2027, 3, 2, 9)),
    ],
)
def test_latest_slot_in_utc(frequency: Frequency, now: datetime, expected: datetime | None) -> None:
    spec = ScheduleSpec(datetime(2026, 11, 2, 9, 0), frequency)
    assert latest_slot(spec, now) == expected


def test_after_downtime_only_the_latest_missed_slot_is_due() -> None:
    spec = ScheduleSpec(datetime(2026, 11, 2, 6, 0), Frequency.DAILY, BERLIN)
    # The service was down from the 3rd to the 9th: five slots were missed, one is due.
    down_from, back_at = utc(2026, 11, 3, 4), utc(2026, 11, 9, 12)
    assert len(slots_between(spec, down_from, back_at)) == 7
    assert latest_slot(spec, back_at) == utc(2026, 11, 9, 5)  # 06:00 CET


@pytest.mark.parametrize(
    ("start_day", "expected_days"),
    [
        (31, ["01-31", "02-28", "03-31", "04-30", "05-31", "06-30", "07-31"]),
        (30, ["01-30", "02-28", "03-30", "04-30", "05-30", "06-30", "07-30"]),
        (29, ["01-29", "02-28", "03-29", "04-29", "05-29", "06-29", "07-29"]),
        (28, ["01-28", "02-28", "03-28", "04-28", "05-28", "06-28", "07-28"]),
    ],
)
def test_monthly_on_late_days_clamps_to_the_month_end(
    start_day: int, expected_days: list[str]
) -> None:
    spec = ScheduleSpec(datetime(2027, 1, start_day, 10, 0), Frequency.MONTHLY)
    slots = slots_between(spec, utc(2027, 1, 1), utc(2027, 7, 31, 23))
    assert [s.strftime("%m-%d") for s in slots] == expected_days
    assert all(s.hour == 10 for s in slots)


def test_monthly_on_the_31st_uses_february_29_in_a_leap_year() -> None:
    spec = ScheduleSpec(datetime(2027, 12, 31, 0, 30), Frequency.MONTHLY, "Asia/Tokyo")
    slots = slots_between(spec, utc(2028, 1, 1), utc(2028, 3, 31))
    assert local(slots, "Asia/Tokyo") == [
        "2028-01-31 00:30 JST",
        "2028-02-29 00:30 JST",
        "2028-03-31 00:30 JST",
    ]


def test_daily_time_in_the_spring_gap_runs_when_the_clocks_jump() -> None:
    # New York, 8 March 2026: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist that day.
    spec = ScheduleSpec(datetime(2026, 3, 6, 2, 30), Frequency.DAILY, NEW_YORK)
    slots = slots_between(spec, utc(2026, 3, 7), utc(2026, 3, 10))
    assert local(slots, NEW_YORK) == [
        "2026-03-07 02:30 EST",
        "2026-03-08 03:00 EDT",
        "2026-03-09 02:30 EDT",
    ]
    assert slots[1] == utc(2026, 3, 8, 7, 0)


def test_daily_time_in_the_repeated_hour_runs_once_at_the_first() -> None:
    # New York, 1 November 2026: 01:00-02:00 happens twice (EDT, then EST).
    spec = ScheduleSpec(datetime(2026, 10, 30, 1, 30), Frequency.DAILY, NEW_YORK)
    slots = slots_between(spec, utc(2026, 10, 31), utc(2026, 11, 3))
    assert local(slots, NEW_YORK) == [
        "2026-10-31 01:30 EDT",
        "2026-11-01 01:30 EDT",
        "2026-11-02 01:30 EST",
    ]


def test_hourly_counts_real_hours_across_both_transitions() -> None:
    spec = ScheduleSpec(datetime(2026, 1, 1, 0, 15), Frequency.HOURLY, NEW_YORK)
    ny = ZoneInfo(NEW_YORK)
    short_day = slots_between(
        spec,
        datetime(2026, 3, 8, tzinfo=ny) - timedelta(seconds=1),
        datetime(2026, 3, 9, tzinfo=ny),
    )
    long_day = slots_between(
        spec,
        datetime(2026, 11, 1, tzinfo=ny) - timedelta(seconds=1),
        datetime(2026, 11, 2, tzinfo=ny),
    )
    assert len(short_day) == 23 and len(long_day) == 25
    assert local(long_day, NEW_YORK)[1:3] == ["2026-11-01 01:15 EDT", "2026-11-01 01:15 EST"]
    assert "2026-03-08 02:15 EST" not in local(short_day, NEW_YORK)


def test_weekly_keeps_its_wall_time_across_a_transition() -> None:
    # Berlin leaves summer time on 25 October 2026.
    spec = ScheduleSpec(datetime(2026, 10, 12, 9, 0), Frequency.WEEKLY, BERLIN)
    slots = slots_between(spec, utc(2026, 10, 1), utc(2026, 11, 3))
    assert local(slots, BERLIN) == [
        "2026-10-12 09:00 CEST",
        "2026-10-19 09:00 CEST",
        "2026-10-26 09:00 CET",
        "2026-11-02 09:00 CET",
    ]
    assert [s.hour for s in slots] == [7, 7, 8, 8]


def test_a_start_that_itself_falls_in_a_gap() -> None:
    spec = ScheduleSpec(datetime(2026, 3, 29, 2, 30), Frequency.MONTHLY, BERLIN)
    assert spec.slot(0) == utc(2026, 3, 29, 1, 0)  # 03:00 CEST, when the clocks jumped
    assert local([spec.slot(1)], BERLIN) == ["2026-04-29 02:30 CEST"]


def test_a_half_hour_gap() -> None:
    # Lord Howe Island moves its clocks by 30 minutes: 02:00 -> 02:30 on 4 October 2026.
    zone = ZoneInfo("Australia/Lord_Howe")
    assert local_to_instant(datetime(2026, 10, 4, 2, 15), zone) == utc(2026, 10, 3, 15, 30)


def test_aware_start_is_read_in_the_connection_zone() -> None:
    spec = ScheduleSpec(utc(2026, 6, 1, 7, 0), Frequency.DAILY, BERLIN)
    assert spec.local_start == datetime(2026, 6, 1, 9, 0)
    assert latest_slot(spec, utc(2026, 12, 1, 12)) == utc(2026, 12, 1, 8)  # 09:00 CET


def test_next_slot_and_key() -> None:
    spec = ScheduleSpec(datetime(2026, 11, 2, 9, 0), Frequency.DAILY)
    assert next_slot(spec, utc(2026, 1, 1)) == utc(2026, 11, 2, 9)
    assert next_slot(spec, utc(2026, 11, 2, 9)) == utc(2026, 11, 3, 9)
    slot = datetime(2026, 11, 2, 10, 0, tzinfo=ZoneInfo(BERLIN))
    assert slot_key("conn-7", slot) == "conn-7@2026-11-02T09:00:00Z"


def test_naive_now_is_refused() -> None:
    spec = ScheduleSpec(datetime(2026, 11, 2, 9, 0), Frequency.DAILY)
    with pytest.raises(ValueError, match="timezone-aware"):
        latest_slot(spec, datetime(2026, 11, 3))


def test_parsing_fields() -> None:
    assert Frequency.parse(" weekly ") is Frequency.WEEKLY
    assert parse_time_zone(None) == ZoneInfo("UTC") and parse_time_zone("") == ZoneInfo("UTC")
    assert parse_time_zone("Europe/Berlin") == ZoneInfo(BERLIN)
    with pytest.raises(ScheduleError) as failure:
        Frequency.parse("fortnightly")
    assert failure.value.field == "Sync Frequency" and "Hourly, Daily, Weekly or Monthly" in str(
        failure.value
    )
    for bad in ["Mars/Olympus", "../etc/passwd", "Europe/"]:
        with pytest.raises(ScheduleError) as zone_failure:
            parse_time_zone(bad)
        assert zone_failure.value.field == "Time Zone"


ZONES = ["UTC", NEW_YORK, BERLIN, "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago"]


@given(
    start=st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)),
    frequency=st.sampled_from(list(Frequency)),
    zone=st.sampled_from(ZONES),
    offset=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=900)),
)
def test_latest_slot_brackets_now(
    start: datetime, frequency: Frequency, zone: str, offset: timedelta
) -> None:
    spec = ScheduleSpec(start, frequency, zone)
    now = spec.slot(0) + offset
    latest = latest_slot(spec, now)
    assert latest is not None
    following = next_slot(spec, now)
    assert latest <= now < following
    assert next_slot(spec, latest) == following
    # the latest slot is itself a slot: the first one after the second before it
    assert next_slot(spec, latest - timedelta(seconds=1)) == latest
