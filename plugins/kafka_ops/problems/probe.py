"""The end-to-end probe (`probe_results`, read straight from a snapshot by `validation.snapshot_checks`):
brokers whose metadata looks healthy but that do not take or serve a record.

Gate (alert key) `no_broker_refusing_writes`: one problem for the cluster, a row per broker (`refusing_rows`),
paged to the cluster's on-call with the broker to blame.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
from kafka_ops.problems.words import ids, more

REFUSING = "no_broker_refusing_writes"


def refusing_rows(results: Iterable[Row], serving: set[int]) -> list[Row]:
    """A row per serving broker whose probe failed (`probe_results` rows with an error, led by it): its
    first failure and how many of its probe partitions failed. A partition with no leader is left out (the
    offline partitions' own page says it)."""
    failed: dict[int, list[Row]] = {}
    for r in sorted(results, key=lambda r: (r["topic"], r["partition"])):
        if r.get("error") and r.get("leader") is not None and int(r["leader"]) in serving:
            failed.setdefault(int(r["leader"]), []).append(r)
    return [
        {"broker_id": b, "problem": f"{rs[0]['error']} (probe {rs[0]['topic']}-{rs[0]['partition']}, acks=all)"
                                   + (f", {len(rs)} of its probe partitions" if len(rs) > 1 else ""),
         "severity": "critical"}
        for b, rs in sorted(failed.items())
    ]  # fmt: skip


def refusing(rows: list[Row], findings: FindingsRows) -> Problem:
    """Brokers that refused or failed the probe (`refusing_rows`)."""
    brokers = [int(r["broker_id"]) for r in rows]
    title = (f"Broker {brokers[0]} does not take writes" if len(brokers) == 1
             else f"{len(brokers)} brokers do not take writes: {ids(brokers)}")  # fmt: skip
    cause = "; ".join(f"broker {r['broker_id']}: {r['problem']}" for r in rows[:3]) + more(len(rows), 3, "brokers")
    return Problem(
        "critical",
        title,
        cause,
        f"its metadata looks healthy, so producers to the partitions broker {ids(brokers)} leads fail unseen by "
        "Kafka's own health: check the broker's log (a full or read-only log dir, an IOException), its dynamic "
        "configs (kafka-configs --describe --entity-type brokers: message.max.bytes), and the quotas and ACLs of "
        "the probe's client",
        since([], findings),
        "probe_results",
        REFUSING,
        tuple(rows),
    )
