"""Consumer groups (`lag_status_*`, `lag_time_groups`, `assignor_*`): lag by Burrow's rules, time
behind, skewed assignments and what Kafka's own assignors would do.

Gates: `no_group_in_err`, `no_group_in_warn`: one problem per group (each group has its own owner),
`group` composes it. Report: the same per-group problems, then groups behind in time that Burrow's
rules do not flag, skewed groups and rebalances the what-if predicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from kafka_ops.analysis.lag_estimates import group_method, time_behind
from kafka_ops.problems.problem import FindingsRows, Problem, Row, groups_rolled_up, since
from kafka_ops.problems.words import SEVERITY_RANK, duration, more, plural

IN_ERR = "no_group_in_err"
IN_WARN = "no_group_in_warn"
BEHIND = "group_behind"
SKEWED = "group_skewed"
REBALANCE_MOVES = "group_rebalance_moves"
_GATE_OF_STATUS = {"ERR": IN_ERR, "WARN": IN_WARN}
_PARTITION_STATUSES = {IN_ERR: frozenset({"STOP", "STALL", "REWIND"}), IN_WARN: frozenset({"WARN"})}
_TITLES = {IN_ERR: "consumer group {group} is in ERR", IN_WARN: "consumer group {group} is falling behind (WARN)"}


def group(row: Row, findings: FindingsRows) -> Problem:
    """The problem of one group Burrow's rules rate ERR or WARN (`row`: its `lag_status_groups` row)."""
    key = _GATE_OF_STATUS[row["status"]]
    g = row["group_id"]
    cause = row.get("cause") or row["status"]
    behind = {r["group_id"]: r for r in findings.rows("lag_time_groups") or []}.get(g)
    if behind is not None and behind["max_lag_seconds"] is not None:
        cause += f"; {time_behind_text(behind)}"
    if behind is not None and trend_text(behind):
        cause += f"; {trend_text(behind)}"
    return Problem(
        "critical" if key == IN_ERR else "warning",
        _TITLES[key].format(group=g),
        cause,
        _lag_action(row),
        since([_groups_since(findings, _PARTITION_STATUSES[key]).get(g)], findings),
        "lag_status_groups",
        key,
        (row,),
    )


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of group gate `name` over its failing groups: a summary of the three worst (most lag
    first), each row with its group's `since`; each group's own problem, which its alert carries, is
    `per_group`'s."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(rows, key=lambda r: (-(r["max_lag"] or 0), r["group_id"]))
        full = {r["group_id"]: r for r in findings.rows("lag_status_groups") or []}
        mine = [group({**full.get(r["group_id"], {}), **r}, findings) for r in rows]
        cause = "; ".join(f"group {r['group_id']}: {r['cause'] or r['status']}" for r in rows[:3])
        return groups_rolled_up(
            "critical" if name == IN_ERR else "warning",
            f"{plural(len(rows), 'consumer group')} in {'ERR' if name == IN_ERR else 'WARN'}",
            cause + more(len(rows), 3, "groups"),
            "lag_status_groups",
            name,
            rows=rows,
            mine=mine,
        )

    return compose


def per_group(rows: list[Row], findings: FindingsRows) -> dict[str, Problem]:
    """Each failing group's own problem, by group id (`rows`: a group gate's failing rows)."""
    full = {r["group_id"]: r for r in findings.rows("lag_status_groups") or []}
    return {str(r["group_id"]): group({**full.get(r["group_id"], {}), **r}, findings) for r in rows}


def problems(findings: FindingsRows) -> list[Problem]:
    """Lagging groups, groups behind in time, skewed groups, rebalances that would move partitions."""
    return [*_lagging(findings), *_skewed(findings)]


def _lagging(findings: FindingsRows) -> list[Problem]:
    rows = findings.rows("lag_status_groups") or []
    flagged = sorted((r for r in rows if r["status"] in _GATE_OF_STATUS), key=lambda r: r["group_id"])
    out = sorted((group(r, findings) for r in flagged), key=lambda p: SEVERITY_RANK[p.severity])
    described = {r["group_id"] for r in rows if r["severity"] != "ok"}
    for g, t in sorted({r["group_id"]: r for r in findings.rows("lag_time_groups") or []}.items()):
        if g in described or t["severity"] not in ("warning", "critical") or t["max_lag_seconds"] is None:
            continue
        action = "the consumers do not keep up: add consumers (up to the partition count) or speed up processing"
        out.append(
            Problem(
                t["severity"],
                f"consumer group {g} is behind",
                "; ".join(filter(None, (time_behind_text(t), trend_text(t)))),
                action,
                since([], findings),
                "lag_time_groups",
                BEHIND,
                (t,),
            )
        )
    return out


def _skewed(findings: FindingsRows) -> list[Problem]:
    recommendations = {r["group_id"]: r for r in findings.rows("assignor_recommendations") or []}
    out = []
    skew = findings.rows("assignor_skew_groups") or []
    for r in sorted(skew, key=lambda r: (-r["spread"], r["group_id"])):
        if not r["skewed"]:
            continue
        rec = recommendations.get(r["group_id"])
        action = None
        if rec is not None:
            action = f"the what-if could not run: {rec['error']}" if rec["error"] else rec["reason"]
        title = f"consumer group {r['group_id']} is skewed ({r['assignor'] or 'unknown assignor'})"
        out.append(
            Problem(
                r["severity"],
                title,
                r["cause"] or "",
                action,
                since([], findings),
                "assignor_skew_groups",
                SKEWED,
                (r,),
            )
        )
    skewed = {r["group_id"] for r in skew if r["skewed"]}
    for g, rec in sorted(recommendations.items()):
        if g in skewed or rec.get("prediction_matches") is not False:
            continue
        out.append(
            Problem(
                severity="warning",
                title=f"consumer group {g}'s next rebalance moves {plural(rec['prediction_moves'] or 0, 'partition')}",
                cause="Kafka's own assignor, fed what the members sent, does not reproduce today's assignment "
                "(e.g. partitions were added)",
                action=rec["reason"],
                since=since([], findings),
                source="assignor_recommendations",
                key=REBALANCE_MOVES,
                rows=(rec,),
            )
        )
    return out


def _lag_action(r: Row) -> str:
    if r.get("rewind_partitions"):
        return "committed offsets went backwards: someone reset them, or a consumer commits stale offsets"
    if r.get("stall_partitions"):
        return "a member holds the partitions but does not move: look for a stuck poll loop or a poison message"
    if r.get("stop_partitions"):
        return "it stopped committing: check that its consumers run and are not stuck rebalancing"
    return "lag keeps growing: add consumers (up to the partition count) or speed up processing"


def time_behind_text(t: Mapping[str, Any]) -> str:
    """`~2 h 00 min (extrapolated) behind on orders-0` from a `lag_time_groups` row."""
    return f"{behind_figure(t)} behind on {t['max_lag_topic']}-{t['max_lag_partition']}"


def trend_text(t: Mapping[str, Any]) -> str:
    """Where a group's lag is heading, from its `lag_time_groups` row: `catching up: zero in ~5 min at 12
    records/s`, `lag growing by 3 records/s: not catching up at this rate`; "" when caught up or unknown."""
    trend, rate = t.get("lag_trend"), t.get("lag_velocity")
    if trend == "closing" and t.get("time_to_close_seconds") is not None and rate is not None:
        return f"catching up: zero in ~{duration(t['time_to_close_seconds'])} at {-rate:.3g} records/s"
    if trend == "growing" and rate is not None:
        return f"lag growing by {rate:.3g} records/s: not catching up at this rate"
    if trend == "steady":
        return "lag steady: not catching up at this rate"
    return ""


def behind_figure(t: Mapping[str, Any]) -> str:
    """A group's time behind with how it was obtained: `~45 s (extrapolated)`, `≥ 30 s`."""
    return time_behind(t["max_lag_seconds"], group_method(t), duration)


def _groups_since(findings: FindingsRows, statuses: frozenset[str]) -> dict[str, datetime]:
    """Per group, the earliest `last_commit_at` of its partitions in `statuses` (lag_status_partitions):
    the group has not moved past that commit since."""
    starts: dict[str, datetime] = {}
    for p in findings.rows("lag_status_partitions") or []:
        at = p.get("last_commit_at")
        g = p["group_id"]
        if p["status"] in statuses and at is not None and (g not in starts or at < starts[g]):
            starts[g] = at
    return starts
