"""Partitions at risk (`isr_health`, `isr_under_replicated`) and the brokers to blame for them
(`broker_attribution`).

Gates: `no_offline_partitions`, `no_under_min_isr_partitions`; `no_broker_down`, paged from each
snapshot as it lands (`validation.snapshot_checks`: a dead broker whose partitions keep min ISR is
still a page). Report only: under-replicated partitions (a warning no gate pages for) and one problem
per broker that is down or out of sync.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
from kafka_ops.problems.words import examples, ids, partition, plural, worst_broker

OFFLINE = "no_offline_partitions"
UNDER_MIN_ISR = "no_under_min_isr_partitions"
BROKER_DOWN = "no_broker_down"
UNDER_REPLICATED = "under_replicated_partitions"
BROKERS = "brokers_to_blame"
FAILS: dict[str, Callable[[Row], bool]] = {
    OFFLINE: lambda r: bool(r["offline"]),
    # an offline partition fails `no_offline_partitions` only: one problem, one critical gate
    UNDER_MIN_ISR: lambda r: bool(r["under_min_isr"]) and not r["offline"],
}
"""Which `isr_health` rows fail each gate."""


def offline(rows: list[Row], findings: FindingsRows, params: Mapping[str, float] | None = None) -> Problem:
    """Partitions without a (registered) leader: `rows` are their `isr_health` rows."""
    rows = sorted(rows, key=lambda r: (r["topic"], r["partition"]))
    involved = {b for r in rows for b in r["replicas"] or []}
    down, _, causes = brokers_involved(findings, involved)
    cause = f"{plural(len(rows), 'partition')} offline"
    cause += f": {'; '.join(causes)}" if causes else f", e.g. {partition(rows[0])}"
    if down:
        action = (
            f"bring broker {ids(down)} back (restart it, or replace it keeping its broker id): these partitions "
            "have no other in-sync replica, and an unclean leader election would lose data"
        )
    else:
        action = "find why these partitions have no leader (controller and broker logs) before anything else"
    return Problem(
        "critical",
        f"{plural(len(rows), 'partition')} offline (no leader): produce and consume fail on them",
        cause,
        action,
        since(_under_replicated_since(findings, rows), findings),
        "isr_health",
        OFFLINE,
        tuple(rows),
    )


def under_min_isr(rows: list[Row], findings: FindingsRows, params: Mapping[str, float] | None = None) -> Problem:
    """Partitions whose ISR is smaller than min.insync.replicas (and not offline): their `isr_health` rows."""
    rows = sorted(rows, key=lambda r: (len(r["isr"] or []) - (r["min_isr"] or 0), r["topic"], r["partition"]))
    involved = {b for r in rows for b in (_missing(r) or r["replicas"] or [])}
    down, lagging, causes = brokers_involved(findings, involved)
    cause = f"{plural(len(rows), 'partition')} under min.insync.replicas (acks=all producers fail)"
    cause += f": {'; '.join(causes)}" if causes else f", e.g. {partition(rows[0])}"
    steps = []
    if down:
        steps.append(f"bring broker {ids(down)} back")
    if lagging:
        steps.append(f"check broker {ids(lagging)} (disk, network, GC, replication throttles): alive but out of sync")
    if not steps:
        steps.append("find why replicas left the ISR (broker logs, isr_events)")
    return Problem(
        "critical",
        f"{plural(len(rows), 'partition')} under min ISR: producers with acks=all are refused",
        cause,
        "; ".join(steps),
        since(_under_replicated_since(findings, rows), findings),
        "isr_health",
        UNDER_MIN_ISR,
        tuple(rows),
    )


def brokers_down(rows: list[Row], findings: FindingsRows, params: Mapping[str, float] | None = None) -> Problem:
    """Brokers that hold replicas but are not registered (or are fenced): their `broker_attribution` rows."""
    rows = sorted(rows, key=lambda r: r["broker_id"])
    down = [r["broker_id"] for r in rows]
    starts = _under_replicated_since_by_broker(findings)
    title = f"Broker {down[0]} is down" if len(down) == 1 else f"{len(down)} brokers are down: {ids(down)}"
    return Problem(
        "critical",
        title,
        "; ".join(str(r["cause"]) for r in rows),
        f"bring broker {ids(down)} back (restart it, or replace it keeping its broker id); until then its "
        "partitions run on fewer replicas, and one more loss takes those at min ISR below it",
        since([starts.get(b) for b in down], findings),
        "broker_attribution",
        BROKER_DOWN,
        tuple(rows),
    )


def under_replicated(rows: list[Row], findings: FindingsRows) -> Problem:
    """Partitions missing replicas from their ISR but still above min ISR: a warning, no page."""
    rows = sorted(rows, key=lambda r: (r["topic"], r["partition"]))
    missing = sorted({b for r in rows for b in _missing(r)})
    cause = f"e.g. {examples(rows)}"
    if missing:
        cause = f"replicas missing on broker {ids(missing)}; {cause}"
    return Problem(
        "warning",
        f"{plural(len(rows), 'partition')} under-replicated",
        cause,
        "they recover once the missing brokers are back and caught up: see which broker is to blame",
        since(_under_replicated_since(findings, rows), findings),
        "isr_health",
        UNDER_REPLICATED,
        tuple(rows),
    )


def problems(findings: FindingsRows) -> list[Problem]:
    """The brokers to blame, then offline, under-min-ISR and under-replicated partitions."""
    out = _brokers(findings)
    rows = findings.rows("isr_health") or []
    for name, compose in ((OFFLINE, offline), (UNDER_MIN_ISR, under_min_isr)):
        hit = [r for r in rows if FAILS[name](r)]
        if hit:
            out.append(compose(hit, findings))
    hit = [r for r in rows if r["status"] == "under_replicated"]
    if hit:
        out.append(under_replicated(hit, findings))
    return out


def _brokers(findings: FindingsRows) -> list[Problem]:
    starts = _under_replicated_since_by_broker(findings)
    out = []
    for r in sorted(findings.rows("broker_attribution") or [], key=worst_broker):
        if not r["cause"]:
            continue
        b = r["broker_id"]
        if r["registered"]:
            title = f"Broker {b} is alive but out of sync"
            action = f"check broker {b}: disk, network, GC, replication throttles"
        else:
            title = f"Broker {b} is down"
            action = f"bring broker {b} back (restart it, or replace it keeping broker id {b})"
        problem = Problem(
            r["severity"], title, r["cause"], action, since([starts.get(b)], findings), "broker_attribution", BROKERS,
            (r,),
        )  # fmt: skip
        out.append(problem)
    return out


def brokers_involved(findings: FindingsRows, involved: set[int]) -> tuple[list[int], list[int], list[str]]:
    """Of `involved`, the brokers `broker_attribution` says are down / alive but lagging, and its
    causes for them ("broker 2 is down: 40 partitions under-replicated"), worst first."""
    down: list[int] = []
    lagging: list[int] = []
    causes: list[str] = []
    for r in sorted(findings.rows("broker_attribution") or [], key=worst_broker):
        if r["broker_id"] not in involved or not r["cause"]:
            continue
        (lagging if r["registered"] else down).append(r["broker_id"])
        causes.append(r["cause"])
    return sorted(down), sorted(lagging), causes


def under_replicated_since(findings: FindingsRows) -> dict[tuple[str, int], datetime]:
    """Per partition (topic, partition), the start of its under-replication streak (`isr_under_replicated`)."""
    return {
        (r["topic"], r["partition"]): r["under_replicated_since"]
        for r in findings.rows("isr_under_replicated") or []
        if r["under_replicated_since"] is not None
    }


def _under_replicated_since(findings: FindingsRows, rows: list[Row]) -> list[datetime]:
    starts = under_replicated_since(findings)
    return [starts[k] for k in ((r["topic"], r["partition"]) for r in rows) if k in starts]


def _under_replicated_since_by_broker(findings: FindingsRows) -> dict[int, datetime]:
    """Per broker, the earliest streak start among the partitions it is missing from."""
    starts: dict[int, datetime] = {}
    for r in findings.rows("isr_under_replicated") or []:
        at = r["under_replicated_since"]
        for b in r["missing"] or []:
            if at is not None and (b not in starts or at < starts[b]):
                starts[b] = at
    return starts


def _missing(r: Row) -> list[int]:
    """Replicas out of the ISR (the gate frame carries them as `missing`; `isr_health` does not)."""
    if r.get("missing") is not None:
        return list(r["missing"])
    isr = set(r["isr"] or [])
    return [b for b in r["replicas"] or [] if b not in isr]
