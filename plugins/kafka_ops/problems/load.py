"""Disk and traffic (`load_problems`): the detector writes each row's `problem` and `action`.

Gates and report: `no_disk_running_out` (critical disk rows), `disk_within_limits` (warning disk rows),
`no_hot_spots` (traffic rows), one problem each (the gate frame's check columns use `FAILS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, gate_problems, since
from kafka_ops.problems.words import more, plural

RUNNING_OUT = "no_disk_running_out"
WITHIN_LIMITS = "disk_within_limits"
HOT_SPOTS = "no_hot_spots"
DISK_KINDS = frozenset(
    {
        "disk_full_soon",
        "disk_over_share",
        "log_dir_full_soon",
        "log_dir_over_share",
        "log_dir_error",
        "disk_skew",
        "log_dir_skew",
    }
)
"""`load_problems` kinds about disk; the rest (hot_partition, hot_broker_in/out) are about traffic."""
_BY_DAYS = frozenset({"disk_full_soon", "log_dir_full_soon"})
FAILS: dict[str, Callable[[Row], bool]] = {
    RUNNING_OUT: lambda r: r["kind"] in DISK_KINDS and r["severity"] == "critical",
    WITHIN_LIMITS: lambda r: r["kind"] in DISK_KINDS and r["severity"] == "warning",
    HOT_SPOTS: lambda r: r["kind"] not in DISK_KINDS and r["severity"] != "ok",
}
"""Which `load_problems` rows fail each gate."""
_GATE_TITLES: dict[str, Callable[[int], str]] = {
    RUNNING_OUT: lambda n: (
        f"disk running out: {plural(n, 'broker or log dir', 'brokers or log dirs')} full or filling up within days"
    ),
    WITHIN_LIMITS: lambda n: (
        f"disk use beyond its limits or skewed: {plural(n, 'broker or log dir', 'brokers or log dirs')}"
    ),
    HOT_SPOTS: lambda n: (
        f"{plural(n, 'hot partition or broker', 'hot partitions or brokers')} far above their peers "
        "or near network capacity"
    ),
}


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of load gate `name`: disk problems by days left (fewest first), then by share or
    ratio; hot spots by bytes per second."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(
            rows, key=lambda r: (r["kind"] not in _BY_DAYS, (1 if r["kind"] in _BY_DAYS else -1) * (r["value"] or 0))
        )
        actions = list(dict.fromkeys(str(r["action"]) for r in rows if r.get("action")))
        return Problem(
            "critical" if name == RUNNING_OUT else "warning",
            _GATE_TITLES[name](len(rows)),
            "; ".join(str(r["problem"]) for r in rows[:3]) + more(len(rows), 3, "load problems"),
            "; ".join(actions[:3]),
            since((r.get("since") for r in rows), findings),
            "load_problems",
            name,
            tuple(rows),
        )

    return compose


def problems(findings: FindingsRows) -> list[Problem]:
    """The load gates' problems, as the page says them, over the rows each gate fails."""
    return gate_problems(findings.rows("load_problems") or [], findings, FAILS, gate)
