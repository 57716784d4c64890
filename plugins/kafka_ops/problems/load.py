"""Disk and traffic (`load_problems`): the detector writes each row's `problem` and `action`.

Gates: `no_disk_running_out` (critical disk rows), `disk_within_limits` (warning disk rows),
`no_hot_spots` (traffic rows). Report: one problem per kind and severity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
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
_KIND_TITLES = {
    "disk_full_soon": lambda n: f"disk filling up on {plural(n, 'broker')}",
    "disk_over_share": lambda n: f"disk nearly full on {plural(n, 'broker')}",
    "log_dir_full_soon": lambda n: f"{plural(n, 'log dir')} filling up",
    "log_dir_over_share": lambda n: f"{plural(n, 'log dir')} nearly full",
    "log_dir_error": lambda n: f"{plural(n, 'log dir')} offline (the broker reports an error)",
    "disk_skew": lambda n: f"disk use skewed: {plural(n, 'broker')} far above the mean",
    "log_dir_skew": lambda n: f"{plural(n, 'log dir')} far fuller than the other dirs of their broker",
    "hot_partition": lambda n: f"{plural(n, 'hot partition')}: far more bytes in than the typical partition",
    "hot_broker_in": lambda n: f"{plural(n, 'broker')} hot on bytes in",
    "hot_broker_out": lambda n: f"{plural(n, 'broker')} hot on bytes out",
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
    """One problem per kind and severity, its first five rows in the cause (fewest days to full, else
    the largest figure, first)."""
    rows = findings.rows("load_problems") or []
    found = []
    for kind, title in _KIND_TITLES.items():
        for severity in ("critical", "warning"):
            mine = [r for r in rows if r["kind"] == kind and r["severity"] == severity]
            if not mine:
                continue
            mine.sort(key=lambda r: (r["value"] or 0.0) * (1 if kind in _BY_DAYS else -1))
            extra = f" and {len(mine) - 5} more" if len(mine) > 5 else ""
            key = (RUNNING_OUT if severity == "critical" else WITHIN_LIMITS) if kind in DISK_KINDS else HOT_SPOTS
            found.append(
                Problem(
                    severity,
                    title(len(mine)),
                    "; ".join(str(r["problem"]) for r in mine[:5]) + extra,
                    mine[0]["action"],
                    since((r.get("since") for r in mine), findings),
                    "load_problems",
                    key,
                    tuple(mine),
                )
            )
    return found
