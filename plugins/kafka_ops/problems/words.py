"""The wording helpers every consumer of a problem shares: counts, durations, id lists, examples.

One home so the page, the report and the digest print `3 partitions`, `35 min` and `orders-0, orders-1
and 2 more` the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2, "ok": 3}
"""Worst first: the order problems, brokers and rows are listed in."""


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 partition`, `3 partitions`; `words` for an irregular plural (`2 entities`)."""
    return f"{count} {word}" if count == 1 else f"{count} {words or word + 's'}"


def duration(span: float | timedelta | None) -> str:
    """Coarse and short, from seconds or a timedelta: `45 s`, `35 min`, `1 h 05 min`, `2 d 3 h`;
    `unknown` for None; a negative span reads as 0 s."""
    if span is None:
        return "unknown"
    seconds = span.total_seconds() if isinstance(span, timedelta) else span
    s = max(0, int(seconds))
    days, rest = divmod(s, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"


def data_size(count: float | None) -> str:
    """`1.5 GB`, `800 kB`, `12 B` (powers of 1000, as disks are sold and `load` says them); `unknown` for None."""
    if count is None:
        return "unknown"
    for unit, name in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(count) >= unit:
            return f"{count / unit:.1f} {name}"
    return f"{int(count)} B"


def when(moment: datetime) -> str:
    """`2026-11-21 08:47:01 UTC`: a moment as every consumer prints it."""
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def ids(values: Iterable[int]) -> str:
    """`1, 2, 3`."""
    return ", ".join(str(v) for v in values)


def partition(row: Mapping[str, Any]) -> str:
    """`orders-3` from a row's topic and partition."""
    return f"{row['topic']}-{row['partition']}"


def examples(rows: Sequence[Mapping[str, Any]], most: int = 3) -> str:
    """The first `most` partitions of `rows`: `orders-0, orders-1, orders-2 and 4 more`."""
    shown = ", ".join(partition(r) for r in rows[:most])
    return shown + (f" and {len(rows) - most} more" if len(rows) > most else "")


def more(count: int, shown: int, what: str) -> str:
    """`; and 4 more brokers` when `count` exceeds what a sentence listed, else nothing."""
    return f"; and {count - shown} more {what}" if count > shown else ""


def worst_broker(row: Mapping[str, Any]) -> tuple[int, int]:
    """Order of `broker_attribution` rows: worst severity first, then by broker id."""
    return SEVERITY_RANK.get(row["severity"], 9), row["broker_id"]
