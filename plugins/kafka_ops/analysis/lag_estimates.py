"""How `lag_time` obtained a lag in seconds, and how every reader (report, alerts, `kafka-ops
findings`) prints it, so that an estimate always reads as an estimate: `~45 s (extrapolated)`,
`≥ 30 s`, a measured figure as `45 s (exact)`, and only a caught-up group's `0 s` as a plain figure.

The methods (`method` of `lag_time_partitions`, `max_lag_method` of `lag_time_groups`):

* `caught_up`: the committed offset is the newest end offset: 0 s, exact;
* `exact`: now - the timestamp of the first unconsumed record, read from the broker at collection
  (`group_offsets.record_timestamp`; with LogAppendTime the broker's append time, with CreateTime
  the producer's, so a producer's clock skew shows in it); "now" is the collection's capture time;
* `interpolated`: the record's time estimated between two recorded (end offset, time) points;
  checked against the CreateTime of the record at the committed offset, within about a second;
* `extrapolated`: estimated beyond the recorded history with the oldest and newest points;
  measured 13-68 s (up to 52 %) too high: an order of magnitude, not a measurement;
* `lower_bound`: the producer was idle for the whole history, the record is at least this old;
* `too_few_points`, `no_commit`: no figure (lag_seconds null).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

CAUGHT_UP: Final = "caught_up"
EXACT: Final = "exact"
INTERPOLATED: Final = "interpolated"
EXTRAPOLATED: Final = "extrapolated"
LOWER_BOUND: Final = "lower_bound"
TOO_FEW_POINTS: Final = "too_few_points"
NO_COMMIT: Final = "no_commit"
METHODS: Final = (CAUGHT_UP, EXACT, INTERPOLATED, EXTRAPOLATED, LOWER_BOUND, TOO_FEW_POINTS, NO_COMMIT)
ESTIMATES: Final = frozenset({INTERPOLATED, EXTRAPOLATED})


def time_behind(seconds: float | None, method: str | None, duration: Callable[[float], str]) -> str:
    """`seconds` printed with `duration`, marked by how it was obtained: `45 s (exact)`,
    `~45 s (extrapolated)`, `≥ 30 s`, `0 s` (caught up); a figure of unknown method (findings written before the method
    was recorded) is `~45 s (estimated)`, never a bare number."""
    if seconds is None:
        return "unknown"
    figure = duration(seconds)
    if method == CAUGHT_UP:
        return figure
    if method == EXACT:
        return f"{figure} (exact)"
    if method == LOWER_BOUND:
        return f"≥ {figure}"
    return f"~{figure} ({method if method in ESTIMATES else 'estimated'})"


def group_method(row: Mapping[str, Any]) -> str | None:
    """The method of a `lag_time_groups` row's figure; rows written before `max_lag_method`
    existed only say whether it was a lower bound."""
    method = row.get("max_lag_method")
    if method is None and row.get("max_is_lower_bound"):
        return LOWER_BOUND
    return None if method is None else str(method)
