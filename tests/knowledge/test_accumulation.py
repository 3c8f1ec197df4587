"""An age read from a ledger stamp (review ages, the writer's freshness) without `strptime` is the age `strptime` reads, for every
stamp, well formed or not."""
from __future__ import annotations

import calendar
import time

from hypothesis import given
from hypothesis import strategies as st

from majordomus.knowledge.accumulation import STAMP, epoch


def _reference(ts: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(ts, STAMP)))
    except (ValueError, TypeError):
        return None


DIGITS = st.text(st.sampled_from("0123456789"), min_size=1, max_size=4)
SHAPED = st.builds(lambda y, mo, d, h, mi, s: f"{y}-{mo}-{d}T{h}:{mi}:{s}Z",
                   DIGITS, DIGITS, DIGITS, DIGITS, DIGITS, DIGITS)
VALID = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))


@given(ts=st.one_of(VALID, SHAPED, st.text(max_size=24)))
def test_a_stamp_reads_as_strptime_reads_it(ts: str) -> None:
    assert epoch(ts) == _reference(ts)


def test_the_edges_of_the_calendar() -> None:
    for ts in ("2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2026-12-31T23:59:60Z", "2026-04-31T00:00:00Z",
               "0000-01-01T00:00:00Z", "2026-1-2T03:04:05Z", "2026-01-02T03:04:05Z "):
        assert epoch(ts) == _reference(ts), ts


def test_the_days_counted_without_calendar_are_calendar_s() -> None:
    """`epoch` counts a usual stamp's days itself (no `calendar` import on a hook's path): every
    month's first, 28th and leap day of years 1 to 2999 and 9999, as `calendar.timegm` counts them."""
    from majordomus.knowledge.accumulation import _days

    for y in [*range(1, 3000), 9999]:
        for m in range(1, 13):
            for d in (1, 28, 29) if m == 2 and calendar.isleap(y) else (1, 28):
                assert _days(y, m, d) * 86400 == calendar.timegm((y, m, d, 0, 0, 0, 0, 0, 0)), (y, m, d)
