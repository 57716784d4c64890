"""Consumer groups and retention (`retention_risk_groups`, `retention_risk_partitions`): records retention
already deleted before a group read them, and when it can delete the first one it has not read yet.

Gates: `no_group_losing_records` (critical: a group lost records, or can lose some within
`retention_eta_critical_s`) and `no_group_at_retention_risk` (warning: within `retention_eta_warning_s`), one
problem per group (each group has its own owner), `group` composes it. Report and digest: the same per-group
problems; the digest lists the partitions with `partition_text`.

An ETA by `retention.ms` is a lower bound (Kafka deletes whole segments, once their newest record is past
retention.ms, at its retention checks: only later, never sooner) and reads "in 40 min at the earliest"; one by
`retention.bytes` is an estimate at the current produce rate and reads "in ~40 min at the current rate".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafka_ops.problems.problem import FindingsRows, Problem, Row, groups_rolled_up, since
from kafka_ops.problems.words import SEVERITY_RANK, data_size, duration, more, partition, plural, when

LOSING = "no_group_losing_records"
AT_RISK = "no_group_at_retention_risk"
FAILS: dict[str, Callable[[Row], bool]] = {
    LOSING: lambda r: r["severity"] == "critical",
    AT_RISK: lambda r: r["severity"] == "warning",
}
"""Which `retention_risk_groups` rows fail each gate."""
_GATE_TITLES: dict[str, Callable[[int], str]] = {
    LOSING: lambda n: f"{plural(n, 'consumer group')} lost unconsumed records to retention or will within minutes",
    AT_RISK: lambda n: f"{plural(n, 'consumer group')} at risk of losing unconsumed records to retention",
}
_SOURCES = {
    "topic": "topic override",
    "broker": "the leader's broker config",
    "broker_default": "cluster-wide broker default",
    "kafka_default": "Kafka's default, assumed: server.properties is not in the snapshot",
}
_ACTION_LOST = (
    "the records are gone: its consumers resume where their auto.offset.reset says (earliest: at the log start; "
    "latest: at the end, skipping everything produced meanwhile; none: they fail), so get them running and "
    "reprocess the lost range from its source if it matters; then give {topic} a retention.ms longer than the "
    "group's worst delay: kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics "
    "--entity-name {topic} --add-config retention.ms=<ms>"
)
_ACTION_AT_RISK = (
    "start or speed up its consumers (lag {lag} on {tp}) before then, or give {topic} a longer {key}: "
    "kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name {topic} "
    "--add-config {key}=<longer>"
)


def eta_phrase(seconds: float | None, lower_bound: bool | None) -> str:
    """`in 40 min at the earliest` (by retention.ms: a lower bound), `in ~40 min at the current rate` (by
    retention.bytes: an estimate), `any time now` (already due), `at an unknown time`."""
    if seconds is None:
        return "at an unknown time"
    if seconds < 1:
        return "any time now"
    if lower_bound:
        return f"in {duration(seconds)} at the earliest"
    return f"in ~{duration(seconds)} at the current rate"


def group_sentence(row: Mapping[str, Any]) -> str:
    """What retention does to the group (a `retention_risk_groups` row), after its name: `lost 1,200 records of
    orders-2 to retention`, `will lose unconsumed records of orders-2 in ~40 min at the current rate`."""
    if row["lost_partitions"]:
        where = f"{row['lost_topic']}-{row['lost_partition']}"
        others = row["lost_partitions"] - 1
        if others:
            where += f" and {plural(others, 'more partition')}"
        return f"lost {row['records_lost']:,} records of {where} to retention"
    where = f"{row['eta_topic']}-{row['eta_partition']}"
    return f"will lose unconsumed records of {where} {eta_phrase(row['eta_seconds'], row['eta_is_lower_bound'])}"


def partition_text(r: Mapping[str, Any]) -> str:
    """One `retention_risk_partitions` row in a line, for the digest and the report's rows."""
    g, tp = r["group_id"], partition(r)
    if r["state"] == "lost":
        return (
            f"group {g} lost {r['records_lost']:,} records of {tp} to retention (committed {r['committed_offset']:,} "
            f"< log start {r['log_start_offset']:,})"
        )
    if r["eta_seconds"] is not None:
        figure = eta_phrase(r["eta_seconds"], r["eta_is_lower_bound"])
        return f"group {g} on {tp}: retention can delete its first unconsumed record {figure} ({r['eta_basis']})"
    return f"group {g} on {tp}: {r['state'].replace('_', ' ')}: {r['reason'] or 'no estimate'}"


def group(row: Row, findings: FindingsRows) -> Problem:
    """The problem of one group the gates fail (`row`: its `retention_risk_groups` row)."""
    g = row["group_id"]
    mine = {
        (r["topic"], r["partition"]): r for r in findings.rows("retention_risk_partitions") or [] if r["group_id"] == g
    }
    if row["lost_partitions"]:
        worst = mine.get((row["lost_topic"], row["lost_partition"]), {})
        cause = _lost_cause(row, worst)
        if row["at_risk_partitions"]:
            nxt = f"{row['eta_topic']}-{row['eta_partition']}"
            cause += f"; next: {nxt} {eta_phrase(row['eta_seconds'], row['eta_is_lower_bound'])}"
        action = _ACTION_LOST.format(topic=row["lost_topic"])
        started = since([row.get("lost_since")], findings)
    else:
        worst = mine.get((row["eta_topic"], row["eta_partition"]), {})
        cause = _at_risk_cause(worst) if worst else group_sentence(row)
        if row["at_risk_partitions"] > 1:
            cause += f"; {plural(row['at_risk_partitions'], 'partition')} at risk in all"
        key = worst.get("eta_basis") or "retention.ms"
        lag = f"{worst['lag']:,}" if worst.get("lag") is not None else "unknown"
        action = _ACTION_AT_RISK.format(lag=lag, tp=f"{row['eta_topic']}-{row['eta_partition']}",
                                        topic=row["eta_topic"], key=key)  # fmt: skip
        started = since([], findings)
    if row.get("unknown_partitions"):
        cause += f" ({plural(row['unknown_partitions'], 'partition')} without an estimate: see the findings)"
    return Problem(
        row["severity"],
        f"consumer group {g} {group_sentence(row)}",
        cause,
        action,
        started,
        "retention_risk_groups",
        LOSING if row["severity"] == "critical" else AT_RISK,
        (row,),
    )


def _lost_cause(row: Row, p: Mapping[str, Any]) -> str:
    tp = f"{row['lost_topic']}-{row['lost_partition']}"
    if not p:
        return f"its committed offset on {tp} is below the log start offset"
    seen = f"first seen by the collection of {when(p['lost_since'])}" if p.get("lost_since") else "seen now"
    if p.get("lost_since_window_start"):
        seen += " (or before: the history read starts there)"
    return (
        f"its committed offset {p['committed_offset']:,} on {tp} is below the log start offset "
        f"{p['log_start_offset']:,}: retention deleted {p['records_lost']:,} records it had not read, {seen}"
    )


def _at_risk_cause(p: Mapping[str, Any]) -> str:
    tp, figure = partition(p), eta_phrase(p["eta_seconds"], p["eta_is_lower_bound"])
    if p["eta_basis"] == "retention.ms":
        written = f", written {when(p['first_unconsumed_at'])}" if p.get("first_unconsumed_at") else ""
        return (
            f"the first record it has not read on {tp} (offset {p['committed_offset']:,}{written}) passes "
            f"retention.ms {duration(p['retention_ms'] / 1000)} ({_SOURCES.get(p['retention_ms_source'], '?')}) "
            f"{figure}: Kafka deletes whole segments once their newest record is that old, at its retention "
            "checks (log.retention.check.interval.ms, 5 min by default), so not sooner"
        )
    rate = f"{p['produce_rate']:,.1f} records/s" if p.get("produce_rate") is not None else "an unknown rate"
    ahead = p["end_offset"] - p["committed_offset"]
    return (
        f"{tp} holds {data_size(p['size_bytes'])} against retention.bytes {data_size(p['retention_bytes'])} "
        f"({_SOURCES.get(p['retention_bytes_source'], '?')}) and grows {rate}: once the {ahead:,} records from its "
        f"offset {p['committed_offset']:,} on hold that much, the segment with its first unread record goes: {figure}"
    )


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of retention gate `name` over its failing groups: a summary of the three worst (most records
    lost, then the earliest ETA), each row with its group's `since`; each group's own problem, which its alert
    carries, is `per_group`'s."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(_with_findings(rows, findings), key=_worst_first)
        mine = [group(r, findings) for r in rows]
        return groups_rolled_up(
            "critical" if name == LOSING else "warning",
            _GATE_TITLES[name](len(rows)),
            "; ".join(p.title for p in mine[:3]) + more(len(rows), 3, "groups"),
            "retention_risk_groups",
            name,
            rows=rows,
            mine=mine,
        )

    return compose


def per_group(rows: list[Row], findings: FindingsRows) -> dict[str, Problem]:
    """Each failing group's own problem, by group id (`rows`: a retention gate's failing rows)."""
    return {str(r["group_id"]): group(r, findings) for r in _with_findings(rows, findings)}


def _with_findings(rows: list[Row], findings: FindingsRows) -> list[Row]:
    """Gate rows completed by, and typed as, their `retention_risk_groups` rows (a gate frame's columns went through
    pandas: a partition number beside a null reads back as a float)."""
    full = {r["group_id"]: r for r in findings.rows("retention_risk_groups") or []}
    return [{**r, **full.get(r["group_id"], {})} for r in rows]


def problems(findings: FindingsRows) -> list[Problem]:
    """Every group the retention gates fail, worst first, as its alert says it."""
    rows = [r for r in findings.rows("retention_risk_groups") or [] if r["severity"] in ("critical", "warning")]
    return [group(r, findings) for r in sorted(rows, key=lambda r: (SEVERITY_RANK[r["severity"]], *_worst_first(r)))]


def _worst_first(r: Mapping[str, Any]) -> tuple[float, float, str]:
    eta = r.get("eta_seconds")
    return -(r.get("records_lost") or 0), float("inf") if eta is None else eta, str(r["group_id"])
