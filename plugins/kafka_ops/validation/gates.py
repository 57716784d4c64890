"""Health gates: pass/fail verdicts over the published findings of one analysis, each with a severity
that decides what happens next (critical pages someone and blocks remediation; warning notifies).

* `no_offline_partitions` (critical): an `isr_health` row is offline (no leader, or a leader that is
  not a registered broker);
* `no_under_min_isr_partitions` (critical): an `isr_health` row is under_min_isr (no leader, or an
  ISR smaller than min.insync.replicas);
* `leader_imbalance_within_threshold` (warning), by the rule of the controller the snapshot's cluster
  kind runs (`leader_balance_cluster.source`): on ZooKeeper, a `leader_balance_brokers`
  imbalance_ratio × 100 is above `thresholds.leader_imbalance_percent`
  (`leader.imbalance.per.broker.percentage`); on KRaft, which removed that setting and counts every
  partition not led by its preferred replica, any imbalance_ratio above 0 (the bound is 0);
* `controller_elections_within_threshold` (warning): `controller_health` elections_last_hour is
  above `thresholds.controller_elections_per_hour`;
* `no_group_in_err` (critical) / `no_group_in_warn` (warning): a `lag_status_groups` status is ERR /
  WARN (group gates run only when a group collection is named);
* `no_group_losing_records` (critical) / `no_group_at_retention_risk` (warning): a `retention_risk_groups` row
  is critical (records lost to retention, or deletable within `retention_eta_critical_s`) / warning (within
  `retention_eta_warning_s`); with the group gates, no rows for an analysis without the table;
* `no_disk_running_out` (critical) / `disk_within_limits` (warning) / `no_hot_spots` (warning): a
  `load_problems` row about disk that is critical (filling within `disk_days_critical`, fuller than
  `disk_share_critical`) / about disk and a warning (filling within `disk_days_warning`, over the
  cluster's `max_disk_share`, a log dir error, disk skew) / about traffic (hot partitions and brokers);
  no rows for an analysis without the table;
* `no_hanging_transactions` (critical) / `no_long_open_transactions` (warning): a `transactions` row is
  critical (hanging, past its own timeout, or older than `transaction_age_critical_s`) / warning (older
  than `transaction_age_warning_s`); with the group gates, no rows for an analysis without the table.

The verdicts come from Great Expectations (suites `suites.GATE_*`, so each lands in Data Docs with
its failing rows); `GateResult` adds what an on-call operator reads first, as `kafka_ops.problems`
composes it from the failing rows (`problems.registry.GATES`): the offending rows (top N, with
topic/partition/broker_id/group_id), a title, a cause, a suggested action, and since when (the one
rule, `problems.problem.since`). Alerting maps `GateResult`s to alerts; this module knows nothing
about alerting.

A gate never passes for want of data: a missing analysis, or an analysis without a required
findings table, raises `LakeError`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

import pandas as pd
import pyarrow as pa

from kafka_ops.errors import HealthGateFailed, LakeError
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.problems.leaders import is_kraft
from kafka_ops.problems.problem import Problem
from kafka_ops.problems.registry import GATES, PER_GROUP
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation import frames
from kafka_ops.validation import suites as s
from kafka_ops.validation.lake_batches import CommittedBatch, find_commit, read_batch_table
from kafka_ops.validation.runner import CheckOutcome, DocsSite, SuiteOutcome, SuiteRun, docs_site, plain, run_suites

TOP = 20
ClusterKind = Literal["zookeeper", "kraft"]
ZOOKEEPER: ClusterKind = "zookeeper"
KRAFT: ClusterKind = "kraft"
GROUP_GATES = frozenset(PER_GROUP)
"""Gates whose failing rows are consumer groups: one problem, and one alert, per group."""


@dataclass(frozen=True)
class GateResult:
    name: str
    severity: s.Severity
    passed: bool
    count: int
    """Offending rows (partitions, brokers, controllers, groups); 0 when passed."""
    rows: tuple[dict[str, Any], ...]
    """The first `top` offending rows, worst first, keyed by lake column names (topic, partition,
    broker_id, group_id, ...) with `problem` where the gate has a sentence per row."""
    cause: str | None
    action: str | None
    since: datetime | None
    """When the problem began, by the one rule (`problems.problem.since`); None when passed."""
    meaning: str
    cluster: str
    snapshot_id: str
    """The analysed batch: a ZooKeeper snapshot, or a group collection for the group gates."""
    data_docs: str | None
    title: str | None = None
    """What is wrong, in the words of `kafka_ops.problems` (None when passed)."""
    problems: tuple[Problem, ...] = ()
    """The problem as the catalogue composes it: one, or one per group for the group gates (each group
    has its own owner)."""

    def summary(self) -> dict[str, Any]:
        return {
            "gate": self.name,
            "severity": self.severity,
            "passed": self.passed,
            "count": self.count,
            "cause": self.cause,
            "action": self.action,
            "since": self.since.isoformat() if self.since else None,
            "data_docs": self.data_docs,
        }


@dataclass(frozen=True)
class GateReport:
    cluster: str
    snapshot_id: str
    group_snapshot_id: str | None
    results: tuple[GateResult, ...]
    data_docs: str | None
    """Index of the cluster's Data Docs site (None when none was built)."""
    seconds: float
    source: ClusterKind = ZOOKEEPER
    """The analysed snapshot's cluster kind, whose controller's rules the gates applied (ZooKeeper's,
    none of them group gates, in a report of the group gates only)."""

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def failed(self, severity: s.Severity | None = None) -> list[GateResult]:
        return [r for r in self.results if not r.passed and (severity is None or r.severity == severity)]

    def raise_for(self, severities: Iterable[s.Severity] = ("critical",)) -> None:
        """Raise `HealthGateFailed` naming every failed gate of these severities (and its cause)."""
        wanted = set(severities)
        failed = [r for r in self.failed() if r.severity in wanted]
        if failed:
            lines = "; ".join(f"{r.name} [{r.severity}] {r.count} failing: {r.cause}" for r in failed)
            raise HealthGateFailed(
                f"health gates failed for cluster {self.cluster} (snapshot {self.snapshot_id}): {lines}",
                tuple(r.name for r in failed),
            )

    def summary(self) -> dict[str, Any]:
        """The XCom payload: verdicts, no rows."""
        return {
            "cluster": self.cluster,
            "snapshot_id": self.snapshot_id,
            "group_snapshot_id": self.group_snapshot_id,
            "passed": self.passed,
            "gates": [r.summary() for r in self.results],
            "data_docs": self.data_docs,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class _Evidence:
    """The findings of one analysis (one commit), read on demand, each table at most once."""

    lake: Lake
    batch: CommittedBatch
    tables: set[str]
    cache: dict[str, pa.Table | None]

    @classmethod
    def of(cls, lake: Lake, cluster: str, snapshot_id: str) -> _Evidence:
        batch = find_commit(lake, ANALYSIS_COMMIT_TABLE, cluster, f"{snapshot_id}.analysis")
        if batch is None:
            raise LakeError(
                f"no analysis of {snapshot_id!r} (cluster {cluster!r}) is committed in {lake.root}: "
                "run the analysis before the health gates"
            )
        tables = set(json.loads(str(batch.commit.get("findings") or "{}")))
        return cls(lake, batch, tables, {})

    def required(self, table: str) -> pa.Table:
        data = self.optional(table)
        if data is None:
            raise LakeError(
                f"the analysis of {self.batch.commit['snapshot_id']} (cluster {self.batch.cluster}) has no "
                f"findings table {table!r} (it has {sorted(self.tables)}): run its detector"
            )
        return data

    def optional(self, table: str) -> pa.Table | None:
        if table not in self.cache:
            self.cache[table] = read_batch_table(self.lake, self.batch, table) if table in self.tables else None
        return self.cache[table]

    @property
    def captured_at(self) -> datetime:
        return self.batch.captured_at.astimezone(UTC)

    def rows(self, table: str) -> list[dict[str, Any]] | None:
        """The rows of findings `table` (None when the analysis did not write it), for `kafka_ops.problems`."""
        data = self.optional(table)
        return None if data is None else data.to_pylist()

    def leader_balance(self) -> dict[str, Any]:
        """The one `leader_balance_cluster` row."""
        rows = self.required("leader_balance_cluster").to_pylist()
        if len(rows) != 1:
            raise LakeError(
                f"the analysis of {self.batch.commit['snapshot_id']} (cluster {self.batch.cluster}) has "
                f"{len(rows)} leader_balance_cluster rows, not one: run the leader_balance detector again"
            )
        return dict(rows[0])

    @property
    def kind(self) -> ClusterKind:
        """The snapshot's cluster kind (`problems.leaders.is_kraft`), from its one leader_balance_cluster row."""
        self.leader_balance()
        return KRAFT if is_kraft(self) else ZOOKEEPER


def run_gates(
    lake: Lake,
    cluster: str,
    snapshot_id: str,
    *,
    group_snapshot_id: str | None = None,
    thresholds: Thresholds | None = None,
    top: int = TOP,
    validated_at: datetime | None = None,
    data_docs: bool = True,
) -> GateReport:
    """Run every health gate over the findings of the analysis of ZooKeeper snapshot `snapshot_id`
    and, given `group_snapshot_id`, the group gates over that group collection's analysis.

    Returns every gate's result (passed ones too); an unhealthy cluster is a result, not an
    exception (`GateReport.raise_for` turns chosen severities into `HealthGateFailed`).
    """
    started = time.perf_counter()
    zk = _Evidence.of(lake, cluster, snapshot_id)
    inputs: list[tuple[s.SuiteSpec, pd.DataFrame, _Evidence]] = [
        (s.GATE_PARTITIONS, frames.isr_gates(zk.required("isr_health")), zk),
        (s.GATE_LEADER_BALANCE, frames.leader_balance_gates(zk.required("leader_balance_brokers")), zk),
        (s.GATE_CONTROLLER, frames.controller_gates(zk.required("controller_health")), zk),
        (s.GATE_QUORUM, frames.quorum_gates(zk.optional("quorum_health")), zk),
        (s.GATE_MIGRATION, frames.migration_gates(zk.optional("migration_health")), zk),
        (s.GATE_LOAD, frames.load_gates(zk.optional("load_problems")), zk),
    ]
    if group_snapshot_id is not None:
        inputs += _group_inputs(_Evidence.of(lake, cluster, group_snapshot_id))
    kind = zk.kind
    site = docs_site(lake, cluster) if data_docs else None
    results = _judge(inputs, thresholds or Thresholds(), kind, validated_at=validated_at, site=site, top=top)
    index = site.index if site is not None else None
    return GateReport(cluster, snapshot_id, group_snapshot_id, results, index, time.perf_counter() - started, kind)


def run_group_gates(
    lake: Lake,
    cluster: str,
    group_snapshot_id: str,
    *,
    thresholds: Thresholds | None = None,
    top: int = TOP,
    validated_at: datetime | None = None,
) -> GateReport:
    """Only the group gates, over the analysis of group collection `group_snapshot_id`, without Data
    Docs: what a consumer group's page needs, whether or not a metadata snapshot was analysed yet, in a
    third of `run_gates`' suites. The report's `snapshot_id` is the group collection's too."""
    started = time.perf_counter()
    inputs = _group_inputs(_Evidence.of(lake, cluster, group_snapshot_id))
    results = _judge(inputs, thresholds or Thresholds(), ZOOKEEPER, validated_at=validated_at, site=None, top=top)
    return GateReport(cluster, group_snapshot_id, group_snapshot_id, results, None, time.perf_counter() - started)


def _group_inputs(groups: _Evidence) -> list[tuple[s.SuiteSpec, pd.DataFrame, _Evidence]]:
    return [
        (s.GATE_GROUPS, frames.group_gates(groups.required("lag_status_groups")), groups),
        (s.GATE_RETENTION, frames.retention_gates(groups.optional("retention_risk_groups")), groups),
        (s.GATE_TRANSACTIONS, frames.transaction_gates(groups.optional("transactions")), groups),
    ]


def _judge(
    inputs: list[tuple[s.SuiteSpec, pd.DataFrame, _Evidence]],
    limits: Thresholds,
    kind: ClusterKind,
    *,
    validated_at: datetime | None,
    site: DocsSite | None,
    top: int,
) -> tuple[GateResult, ...]:
    """Every gate of the suites of `inputs` (suite, its frame, the analysis it reads), each a result."""
    frames_by_suite = {spec.name: (frame, evidence) for spec, frame, evidence in inputs}
    runs = [SuiteRun(spec, frame, str(evidence.batch.commit["snapshot_id"])) for spec, frame, evidence in inputs]
    parameters = {
        # the KRaft controller counts every partition off its preferred replica: no share is within it
        "leader_imbalance_percent": limits.leader_imbalance_percent if kind == ZOOKEEPER else 0.0,
        "controller_elections_per_hour": limits.controller_elections_per_hour,
    }
    at = (validated_at or datetime.now(UTC)).astimezone(UTC)
    outcomes = run_suites(runs, parameters, run_time=at, site=site)
    results = []
    for outcome in outcomes:
        frame, evidence = frames_by_suite[outcome.spec.name]
        for check in outcome.checks:
            results.append(
                _result(outcome=outcome, check=check, frame=frame, evidence=evidence, parameters=parameters, top=top)
            )
    return tuple(results)


def _result(
    *,
    outcome: SuiteOutcome,
    check: CheckOutcome,
    frame: pd.DataFrame,
    evidence: _Evidence,
    parameters: Mapping[str, float],
    top: int,
) -> GateResult:
    problem = None
    per_group: tuple[Problem, ...] = ()
    if not check.passed:
        offending = _offending_rows(frame, outcome.spec, check)
        problem = replace(GATES[check.check.name](offending, evidence, parameters), severity=check.check.severity)
        if check.check.name in GROUP_GATES:
            per_group = tuple(PER_GROUP[check.check.name](list(problem.rows), evidence).values())
    return GateResult(
        name=check.check.name,
        severity=check.check.severity,
        passed=check.passed,
        count=check.count,
        rows=problem.rows[:top] if problem else (),
        cause=problem.cause if problem else None,
        action=problem.action if problem else None,
        since=problem.since if problem else None,
        meaning=check.check.meaning,
        cluster=evidence.batch.cluster,
        snapshot_id=outcome.run_name,
        data_docs=outcome.page,
        title=problem.title if problem else None,
        problems=per_group or ((problem,) if problem else ()),
    )


def _offending_rows(frame: pd.DataFrame, spec: s.SuiteSpec, check: CheckOutcome) -> list[dict[str, Any]]:
    """The frame rows Great Expectations reported as failing (matched on the suite's keys), with the
    check's sentence as `problem`."""
    wanted = {tuple(row.get(k) for k in spec.keys) for row in check.rows}
    out = []
    for record in frame.to_dict("records"):
        key = tuple(plain(record[k]) for k in spec.keys)
        if key in wanted:
            row = {k: _plain_deep(v) for k, v in record.items() if k not in _check_columns(spec)}
            if check.check.kind == "all_ok":
                row["problem"] = record[check.check.name]
            out.append(row)
    return out


def _check_columns(spec: s.SuiteSpec) -> set[str]:
    return {c.name for c in spec.checks if c.kind == "all_ok"}


def _plain_deep(value: Any) -> Any:
    if isinstance(value, list):
        return [plain(v) for v in value]
    return plain(value)
