"""The checks that page straight from a snapshot, as it lands: no Spark, no history, one batch read.

The analysis DAG's gates judge the findings of a Spark analysis of the day's history, which starts
after the snapshot DAG commits and takes minutes on a busy machine. What must page within a minute of
a broker dying needs none of that history: which partitions are offline or under min ISR, and which
brokers holding replicas are down, are facts of the one snapshot. This module reads that snapshot's
`partitions`, `brokers`, `configs` and `admin_requests` (`lake_batches`, only its own files) and
computes them with the analysis' rules:

* the `isr_health` rows' flags (`detectors.isr_health`): replicas are the assignment minus replicas a
  reassignment is still adding; offline = no leader, or a leader that is not a registered broker;
  under min ISR = no leader, or an ISR smaller than the enforced min ISR, resolved from the topic's
  config, the leader's, the cluster default, else the `min_insync_replicas_default` setting, and
  capped at the whole assignment (Kafka's `Partition.effectiveMinIsr`); topics pending deletion are
  left out;
* the `broker_attribution` rows of the brokers that are down: not registered (on KRaft: fenced, or
  gone) while they hold assigned replicas;
* the brokers that failed the end-to-end probe (`probe_results`, `problems.probe`): registered, leading a
  probe partition, and refusing or failing its record.

`tests/unit/validation/test_snapshot_checks.py` holds both against the Spark detectors on the same
snapshots. The problems are the catalogue's (`problems.partitions`: `no_offline_partitions`,
`no_under_min_isr_partitions`, `no_broker_down`), so a page reads the same whichever path sent it.
What a snapshot cannot say (since when a partition has been under-replicated, which broker lags
rather than died) the analysis adds when it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kafka_ops.errors import LakeError
from kafka_ops.kafka_types import KAFKA_DEFAULT_MIN_ISR
from kafka_ops.lake.schema import COMMIT_TABLE, DELETE_TOPIC
from kafka_ops.lake.store import Lake
from kafka_ops.problems import partitions, probe
from kafka_ops.problems.problem import BatchFindings, Problem, Row
from kafka_ops.validation.lake_batches import CommittedBatch, find_commit, read_batch_table

MinIsr = Callable[[str, int], int]
"""(topic, leader) → the configured min.insync.replicas."""

CHECKS = (partitions.OFFLINE, partitions.UNDER_MIN_ISR, partitions.BROKER_DOWN, probe.REFUSING)
"""The problems (gate names, alert keys) a snapshot pages by itself."""


@dataclass(frozen=True)
class SnapshotLook:
    """What one snapshot says by itself: its findings and the problems that page, worst first."""

    findings: BatchFindings
    problems: tuple[Problem, ...]

    def summary(self) -> dict[str, Any]:
        """The XCom payload: which checks failed (`problems`: key → rows affected)."""
        return {
            "snapshot_id": self.findings.snapshot_id,
            "captured_at": self.findings.captured_at.isoformat(),
            "problems": {p.key: len(p.rows) for p in self.problems},
        }


def look(lake: Lake, cluster: str, snapshot_id: str, min_isr_default: int = KAFKA_DEFAULT_MIN_ISR) -> SnapshotLook:
    """The paging checks over committed snapshot `snapshot_id` of `cluster`; `LakeError` naming it when it
    was never committed (a snapshot that is not in the lake pages nothing: the blind-spot page does)."""
    batch = find_commit(lake, COMMIT_TABLE, cluster, snapshot_id)
    if batch is None:
        raise LakeError(f"no snapshot {snapshot_id!r} of cluster {cluster!r} is committed in {lake.root}")
    tables = {t: _rows(lake, batch, t) for t in ("partitions", "brokers", "configs", "admin_requests", "probe_results")}
    findings = snapshot_findings(snapshot_id, batch.captured_at.astimezone(UTC), tables, min_isr_default)
    return SnapshotLook(findings, tuple(problems(findings)))


def snapshot_findings(
    snapshot_id: str, captured_at: datetime, tables: Mapping[str, list[Row]], min_isr_default: int
) -> BatchFindings:
    """Pure: one snapshot's rows of `partitions`, `brokers`, `configs`, `admin_requests` and (where it was
    probed) `probe_results` → its findings."""
    deleting = {r["topic"] for r in tables["admin_requests"] if r["request"] == DELETE_TOPIC}
    served = [r for r in tables["partitions"] if r["has_state"] and r["topic"] not in deleting]
    live = {int(r["broker_id"]) for r in tables["brokers"]}
    resolve = _min_isr(tables["configs"], min_isr_default)
    health = [_isr_row(r, live, resolve) for r in served]
    refusing = probe.refusing_rows(tables.get("probe_results", []), live)
    return BatchFindings(
        snapshot_id,
        captured_at,
        {"isr_health": health, "broker_attribution": _brokers_down(served, live), "probe_refusing": refusing},
    )


def problems(findings: BatchFindings) -> list[Problem]:
    """The catalogue's problems for the checks that fail: down brokers, offline, under min ISR."""
    out: list[Problem] = []
    down = findings.rows("broker_attribution") or []
    if down:
        out.append(partitions.brokers_down(down, findings))
    refusing = findings.rows("probe_refusing") or []
    if refusing:
        out.append(probe.refusing(refusing, findings))
    health = findings.rows("isr_health") or []
    for name, compose in (
        (partitions.OFFLINE, partitions.offline),
        (partitions.UNDER_MIN_ISR, partitions.under_min_isr),
    ):
        hit = [r for r in health if partitions.FAILS[name](r)]
        if hit:
            out.append(compose(hit, findings))
    return sorted(out, key=lambda p: CHECKS.index(p.key))


def _rows(lake: Lake, batch: CommittedBatch, table: str) -> list[Row]:
    data = read_batch_table(lake, batch, table)
    return [] if data is None else data.to_pylist()


def _isr_row(r: Row, live: set[int], min_isr: MinIsr) -> Row:
    adding = set(r["adding_replicas"] or ())
    replicas = [b for b in r["replicas"] or () if b not in adding]
    isr = list(r["isr"] or ())
    leader = r["leader"] if r["leader"] is not None else -1
    # capped at every assigned replica, adding ones included (Kafka: remoteReplicasMap.size + 1)
    enforced = min(min_isr(r["topic"], leader), max(len(r["replicas"] or ()), 1))
    offline = leader == -1 or leader not in live
    under_min_isr = leader == -1 or len(isr) < enforced
    under_replicated = len(isr) < len(replicas)
    at_min_isr = len(isr) == enforced
    flags = (("offline", offline), ("under_min_isr", under_min_isr), ("under_replicated", under_replicated),
             ("at_min_isr", at_min_isr))  # fmt: skip
    return {
        "topic": r["topic"], "partition": r["partition"], "replicas": replicas, "isr": isr, "elr": r["elr"],
        "leader": leader, "min_isr": enforced, **dict(flags),
        "status": next((name for name, flagged in flags if flagged), "ok"),
    }  # fmt: skip


def _min_isr(configs: Iterable[Row], static: int) -> MinIsr:
    """(topic, leader) → the configured min ISR, in Kafka's order: the topic's, the leader's, the
    cluster default, else `static`. Values that are not whole numbers are skipped, as the analysis
    skips them (`try_cast`); several values of one entity: the largest, as it takes the max."""
    levels: dict[tuple[str, str], int] = {}
    for c in configs:
        if c["config_key"] != "min.insync.replicas":
            continue
        try:
            value = int(str(c["config_value"]).strip())
        except ValueError:
            continue
        key = (c["entity_type"], c["entity_name"])
        levels[key] = max(value, levels.get(key, value))
    default = levels.get(("broker", "<default>"), static)

    def configured(topic: str, leader: int) -> int:
        if ("topic", topic) in levels:
            return levels[("topic", topic)]
        return levels.get(("broker", str(leader)), default)

    return configured


def _brokers_down(served: list[Row], live: set[int]) -> list[Row]:
    """A `broker_attribution` row per broker that holds assigned replicas but is not registered."""
    assigned: dict[int, int] = {}
    missing: dict[int, int] = {}
    for r in served:
        adding, isr = set(r["adding_replicas"] or ()), set(r["isr"] or ())
        for b in r["replicas"] or ():
            if b in live or b in adding:
                continue
            assigned[b] = assigned.get(b, 0) + 1
            missing[b] = missing.get(b, 0) + (b not in isr)
    rows = []
    for b in sorted(assigned):
        in_isr = assigned[b] - missing[b]
        cause = f"broker {b} is down: {_partitions(missing[b])} under-replicated"
        cause += f", still in the ISR of {_partitions(in_isr)}" if in_isr else ""
        rows.append({
            "broker_id": b, "registered": False, "assigned_replicas": assigned[b], "missing_from_isr": missing[b],
            "cause": cause, "severity": "critical",
        })  # fmt: skip
    return rows


def _partitions(n: int) -> str:
    return f"{n} partition" if n == 1 else f"{n} partitions"
