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
* `no_disk_running_out` (critical) / `disk_within_limits` (warning) / `no_hot_spots` (warning): a
  `load_problems` row about disk that is critical (filling within `disk_days_critical`, fuller than
  `disk_share_critical`) / about disk and a warning (filling within `disk_days_warning`, over the
  cluster's `max_disk_share`, a log dir error, disk skew) / about traffic (hot partitions and brokers);
  no rows for an analysis without the table;
* `no_hanging_transactions` (critical) / `no_long_open_transactions` (warning): a `transactions` row is
  critical (hanging, past its own timeout, or older than `transaction_age_critical_s`) / warning (older
  than `transaction_age_warning_s`); with the group gates, no rows for an analysis without the table.

The verdicts come from Great Expectations (suites `suites.GATE_*`, so each lands in Data Docs with
its failing rows); `GateResult` adds what an on-call operator reads first: the offending rows (top N,
with topic/partition/broker_id/group_id), a cause (the `broker_attribution` or `lag_status_groups`
sentence where one exists), a suggested action, and since when (the under-replication streak's
start, the first election of the hour, the group's last commit; else the snapshot's capture time:
first seen now). Alerting maps `GateResult`s to alerts; this module knows nothing about alerting.

A gate never passes for want of data: a missing analysis, or an analysis without a required
findings table, raises `LakeError`.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pandas as pd
import pyarrow as pa

from kafka_ops.errors import HealthGateFailed, LakeError
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation import frames
from kafka_ops.validation import suites as s
from kafka_ops.validation.lake_batches import CommittedBatch, find_commit, read_batch_table
from kafka_ops.validation.runner import CheckOutcome, SuiteOutcome, SuiteRun, docs_site, plain, run_suites

TOP = 20
ClusterKind = Literal["zookeeper", "kraft"]
ZOOKEEPER: ClusterKind = "zookeeper"
KRAFT: ClusterKind = "kraft"


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
    meaning: str
    cluster: str
    snapshot_id: str
    """The analysed batch: a ZooKeeper snapshot, or a group collection for the group gates."""
    data_docs: str | None

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
    """The analysed snapshot's cluster kind, whose controller's rules the gates applied."""

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
        """The snapshot's cluster kind, as the leader_balance detector read it from the commit log; an
        analysis written before it recorded one is judged as it was then, by the ZooKeeper rule."""
        return KRAFT if self.leader_balance().get("source") == KRAFT else ZOOKEEPER


@dataclass(frozen=True)
class _Verdict:
    rows: list[dict[str, Any]]
    cause: str
    action: str
    since: datetime | None


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
    limits = thresholds or Thresholds()
    zk = _Evidence.of(lake, cluster, snapshot_id)
    kind = zk.kind
    inputs: list[tuple[s.SuiteSpec, pd.DataFrame, _Evidence]] = [
        (s.GATE_PARTITIONS, frames.isr_gates(zk.required("isr_health")), zk),
        (s.GATE_LEADER_BALANCE, frames.leader_balance_gates(zk.required("leader_balance_brokers")), zk),
        (s.GATE_CONTROLLER, frames.controller_gates(zk.required("controller_health")), zk),
        (s.GATE_QUORUM, frames.quorum_gates(zk.optional("quorum_health")), zk),
        (s.GATE_MIGRATION, frames.migration_gates(zk.optional("migration_health")), zk),
        (s.GATE_LOAD, frames.load_gates(zk.optional("load_problems")), zk),
    ]
    if group_snapshot_id is not None:
        groups = _Evidence.of(lake, cluster, group_snapshot_id)
        inputs.append((s.GATE_GROUPS, frames.group_gates(groups.required("lag_status_groups")), groups))
        inputs.append((s.GATE_TRANSACTIONS, frames.transaction_gates(groups.optional("transactions")), groups))
    frames_by_suite = {spec.name: (frame, evidence) for spec, frame, evidence in inputs}
    runs = [SuiteRun(spec, frame, str(evidence.batch.commit["snapshot_id"])) for spec, frame, evidence in inputs]
    parameters = {
        # the KRaft controller counts every partition off its preferred replica: no share is within it
        "leader_imbalance_percent": limits.leader_imbalance_percent if kind == ZOOKEEPER else 0.0,
        "controller_elections_per_hour": limits.controller_elections_per_hour,
    }
    at = (validated_at or datetime.now(UTC)).astimezone(UTC)
    site = docs_site(lake, cluster) if data_docs else None
    outcomes = run_suites(runs, parameters, run_time=at, site=site)
    results = []
    for outcome in outcomes:
        frame, evidence = frames_by_suite[outcome.spec.name]
        for check in outcome.checks:
            results.append(
                _result(outcome=outcome, check=check, frame=frame, evidence=evidence, parameters=parameters, top=top)
            )
    return GateReport(
        cluster,
        snapshot_id,
        group_snapshot_id,
        tuple(results),
        site.index if site is not None else None,
        time.perf_counter() - started,
        kind,
    )


def _result(
    *,
    outcome: SuiteOutcome,
    check: CheckOutcome,
    frame: pd.DataFrame,
    evidence: _Evidence,
    parameters: Mapping[str, float],
    top: int,
) -> GateResult:
    verdict = None
    if not check.passed:
        offending = _offending_rows(frame, outcome.spec, check)
        verdict = _VERDICTS[check.check.name](offending, evidence, parameters)
    return GateResult(
        name=check.check.name,
        severity=check.check.severity,
        passed=check.passed,
        count=check.count,
        rows=tuple(verdict.rows[:top]) if verdict else (),
        cause=verdict.cause if verdict else None,
        action=verdict.action if verdict else None,
        since=verdict.since if verdict else None,
        meaning=check.check.meaning,
        cluster=evidence.batch.cluster,
        snapshot_id=outcome.run_name,
        data_docs=outcome.page,
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


# -- verdicts: rows (worst first), cause, action, since ---------------------------------------------


def _offline(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    rows = sorted(rows, key=lambda r: (r["topic"], r["partition"]))
    involved = {b for r in rows for b in r["replicas"]}
    down, _, causes = _brokers(ev, involved)
    n = len(rows)
    cause = f"{n} partition{'s' if n != 1 else ''} offline"
    cause += f": {'; '.join(causes)}" if causes else f", e.g. {rows[0]['topic']}-{rows[0]['partition']}"
    if down:
        action = (
            f"bring broker {_ids(down)} back (restart it, or replace it keeping its broker id): these partitions "
            "have no other in-sync replica, and an unclean leader election would lose data"
        )
    else:
        action = "find why these partitions have no leader (controller and broker logs) before anything else"
    return _Verdict(rows, cause, action, _under_replicated_since(ev, rows))


def _under_min_isr(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    rows = sorted(rows, key=lambda r: (len(r["isr"]) - (r["min_isr"] or 0), r["topic"], r["partition"]))
    involved = {b for r in rows for b in (r["missing"] or r["replicas"])}
    down, lagging, causes = _brokers(ev, involved)
    n = len(rows)
    cause = f"{n} partition{'s' if n != 1 else ''} under min.insync.replicas (acks=all producers fail)"
    cause += f": {'; '.join(causes)}" if causes else f", e.g. {rows[0]['topic']}-{rows[0]['partition']}"
    steps = []
    if down:
        steps.append(f"bring broker {_ids(down)} back")
    if lagging:
        steps.append(f"check broker {_ids(lagging)} (disk, network, GC, replication throttles): alive but out of sync")
    if not steps:
        steps.append("find why replicas left the ISR (broker logs, isr_events)")
    return _Verdict(rows, cause, "; ".join(steps), _under_replicated_since(ev, rows))


def _leader_imbalance(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    if ev.kind == KRAFT:
        return _off_preferred_leader(rows, ev)
    rows = sorted(rows, key=lambda r: (-(r["imbalance_percent"] or 0.0), r["broker_id"]))
    threshold = params["leader_imbalance_percent"]
    parts = [
        f"broker {r['broker_id']} leads {r['preferred'] - r['preferred_led_by_other']} of the {r['preferred']} "
        f"partitions it is preferred leader for ({r['imbalance_percent']:.0f}% > {threshold:g}%)"
        for r in rows[:3]
    ]
    cause = "; ".join(parts) + _more(len(rows), 3, "brokers")
    return _Verdict(rows, cause, _election_steps(ev), ev.captured_at)


def _off_preferred_leader(rows: list[dict[str, Any]], ev: _Evidence) -> _Verdict:
    """The KRaft controller's rule: every partition not led by its preferred replica counts."""
    rows = sorted(rows, key=lambda r: (-(r["preferred_led_by_other"] or 0), r["broker_id"]))
    cluster = ev.leader_balance()
    off, fixable = int(cluster["non_preferred"] or 0), int(cluster["fixable"] or 0)
    parts = [
        f"broker {r['broker_id']} leads {r['preferred'] - r['preferred_led_by_other']} of the {r['preferred']} "
        "partitions it is preferred leader for"
        for r in rows[:3]
    ]
    cause = (
        f"{_n(off, 'partition')} not led by their preferred replica, {fixable} of them fixable now (preferred "
        "replica alive and in the ISR); KRaft counts every one, it has no imbalance percentage: "
        + "; ".join(parts)
        + _more(len(rows), 3, "brokers")
    )
    return _Verdict(rows, cause, _election_steps(ev), ev.captured_at)


def _election_steps(ev: _Evidence) -> str:
    """What to do about partitions off their preferred leader: elect the fixable ones, unblock the rest."""
    partitions = ev.optional("leader_balance_partitions")
    if partitions is None:
        return "run kafka_preferred_leader_election"
    listed = partitions.select(["fixable", "blocked_reason"]).to_pylist()
    fixable = sum(1 for p in listed if p["fixable"])
    blocked = Counter(p["blocked_reason"] for p in listed if not p["fixable"] and p["blocked_reason"])
    steps = []
    if fixable:
        steps.append(
            f"run kafka_preferred_leader_election: {_n(fixable, 'partition')} can move back to their "
            "preferred leader now"
        )
    steps += [
        f"{_n(n, 'partition')} cannot move back yet ({reason}): fix that first, then elect"
        for reason, n in blocked.most_common()
    ]
    return "; ".join(steps) or "run kafka_preferred_leader_election"


def _controller_elections(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    row = rows[0]
    cause = (
        f"{row['elections_last_hour']} controller elections in the last hour "
        f"(threshold {params['controller_elections_per_hour']:g}); the controller is now broker "
        f"{row['controller_id']} at epoch {row['controller_epoch']}"
    )
    action = (
        "check the ZooKeeper ensemble (latency, session expirations) and the controller broker's GC and "
        "network; hold off remediation until the controller is stable"
    )
    since = row.get("last_change_at")
    changes = ev.optional("controller_changes")
    if changes is not None:
        hour_ago = ev.captured_at - timedelta(hours=1)
        times = [
            c["observed_at"]
            for c in changes.select(["observed_at", "elections"]).to_pylist()
            if c["elections"] and c["observed_at"] is not None and c["observed_at"] > hour_ago
        ]
        since = min(times) if times else since
    return _Verdict(rows, cause, action, since or ev.captured_at)


def _quorum(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    rows = sorted(rows, key=lambda r: (r["kind"], r["replica_id"]))
    cause = "; ".join(str(r["problem"]) for r in rows[:3]) + _more(len(rows), 3, "replicas")
    action = "; ".join(str(r["action"]) for r in rows[:3] if r.get("action"))
    fenced = [r["fenced_since"] for r in rows if r.get("fenced_since") is not None]
    since = min(fenced) if fenced else ev.captured_at
    return _Verdict(rows, cause, action or "check the controller quorum", since)


def _migration(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    rows = sorted(rows, key=lambda r: r["subject"])
    cause = "; ".join(str(r["problem"]) for r in rows[:3]) + _more(len(rows), 3, "partition fields")
    action = next((str(r["action"]) for r in rows if r.get("action")), "check the migration's controllers")
    known = [r["since"] for r in rows if r.get("since") is not None]
    return _Verdict(rows, cause, action, min(known) if known else ev.captured_at)


def _groups(statuses: frozenset[str]) -> Callable[[list[dict[str, Any]], _Evidence, Mapping[str, float]], _Verdict]:
    def verdict(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
        rows = sorted(rows, key=lambda r: (-(r["max_lag"] or 0), r["group_id"]))
        since_by_group = _groups_since(ev, statuses)
        for r in rows:
            r["since"] = since_by_group.get(r["group_id"])
        cause = "; ".join(f"group {r['group_id']}: {r['cause'] or r['status']}" for r in rows[:3])
        cause += _more(len(rows), 3, "groups")
        action = "; ".join(
            f"check consumer group {r['group_id']}: {r['cause'] or r['status']}"
            + (f" (since {r['since']:%Y-%m-%d %H:%M} UTC)" if r["since"] else "")
            for r in rows[:3]
        )
        known = [r["since"] for r in rows if r["since"] is not None]
        return _Verdict(rows, cause, action, min(known) if known else ev.captured_at)

    return verdict


def _transactions(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    rows = sorted(rows, key=lambda r: (not r["hanging"], -(r["age_seconds"] or 0), r["topic"], r["partition"]))
    cause = "; ".join(str(r["problem"]) for r in rows[:3]) + _more(len(rows), 3, "transactions")
    action = "; ".join(str(r["action"]) for r in rows[:3])
    known = [r["start_time"] for r in rows if r.get("start_time") is not None]
    return _Verdict(rows, cause, action, min(known) if known else ev.captured_at)


def _load(rows: list[dict[str, Any]], ev: _Evidence, params: Mapping[str, float]) -> _Verdict:
    """Disk problems by days left (fewest first), then by share or ratio; hot spots by bytes per second."""
    by_days = {"disk_full_soon", "log_dir_full_soon"}
    rows = sorted(
        rows, key=lambda r: (r["kind"] not in by_days, (1 if r["kind"] in by_days else -1) * (r["value"] or 0))
    )
    cause = "; ".join(str(r["problem"]) for r in rows[:3]) + _more(len(rows), 3, "load problems")
    actions = list(dict.fromkeys(str(r["action"]) for r in rows if r.get("action")))
    known = [r["since"] for r in rows if r.get("since") is not None]
    return _Verdict(rows, cause, "; ".join(actions[:3]), min(known) if known else ev.captured_at)


_VERDICTS: dict[str, Callable[[list[dict[str, Any]], _Evidence, Mapping[str, float]], _Verdict]] = {
    s.NO_OFFLINE_PARTITIONS.name: _offline,
    s.NO_UNDER_MIN_ISR_PARTITIONS.name: _under_min_isr,
    s.LEADER_IMBALANCE_WITHIN_THRESHOLD.name: _leader_imbalance,
    s.CONTROLLER_ELECTIONS_WITHIN_THRESHOLD.name: _controller_elections,
    s.QUORUM_HAS_A_MAJORITY.name: _quorum,
    s.QUORUM_REPLICAS_KEEP_UP.name: _quorum,
    s.NO_FENCED_BROKERS.name: _quorum,
    s.MIGRATION_DUAL_WRITE_RUNS.name: _migration,
    s.MIGRATION_NOT_STALLED.name: _migration,
    s.MIGRATION_VIEWS_AGREE.name: _migration,
    s.SNAPSHOTS_READ_LIVE_METADATA.name: _migration,
    s.NO_GROUP_IN_ERR.name: _groups(frozenset({"STOP", "STALL", "REWIND"})),
    s.NO_GROUP_IN_WARN.name: _groups(frozenset({"WARN"})),
    s.NO_HANGING_TRANSACTIONS.name: _transactions,
    s.NO_LONG_OPEN_TRANSACTIONS.name: _transactions,
    s.NO_DISK_RUNNING_OUT.name: _load,
    s.DISK_WITHIN_LIMITS.name: _load,
    s.NO_HOT_SPOTS.name: _load,
}


def _brokers(ev: _Evidence, involved: set[int]) -> tuple[list[int], list[int], list[str]]:
    """Of `involved`, the brokers `broker_attribution` says are down / alive but lagging, and its
    causes for them ("broker 2 is down: 40 partitions under-replicated")."""
    table = ev.optional("broker_attribution")
    if table is None:
        return [], [], []
    down: list[int] = []
    lagging: list[int] = []
    causes: list[str] = []
    for r in sorted(table.select(["broker_id", "registered", "cause", "severity"]).to_pylist(), key=_worst):
        if r["broker_id"] not in involved or not r["cause"]:
            continue
        (lagging if r["registered"] else down).append(r["broker_id"])
        causes.append(r["cause"])
    return sorted(down), sorted(lagging), causes


def _worst(r: Mapping[str, Any]) -> tuple[int, int]:
    return ({"critical": 0, "warning": 1}.get(r["severity"], 2), r["broker_id"])


def _under_replicated_since(ev: _Evidence, rows: list[dict[str, Any]]) -> datetime:
    """The earliest `isr_under_replicated.under_replicated_since` among these partitions; else the
    snapshot's capture time."""
    table = ev.optional("isr_under_replicated")
    if table is not None:
        keys = {(r["topic"], r["partition"]) for r in rows}
        starts = [
            u["under_replicated_since"]
            for u in table.select(["topic", "partition", "under_replicated_since"]).to_pylist()
            if (u["topic"], u["partition"]) in keys and u["under_replicated_since"] is not None
        ]
        if starts:
            return min(starts)
    return ev.captured_at


def _groups_since(ev: _Evidence, statuses: frozenset[str]) -> dict[str, datetime]:
    """Per group, the earliest `last_commit_at` of its partitions in `statuses` (lag_status_partitions)."""
    table = ev.optional("lag_status_partitions")
    if table is None:
        return {}
    since: dict[str, datetime] = {}
    for p in table.select(["group_id", "status", "last_commit_at"]).to_pylist():
        at = p["last_commit_at"]
        if p["status"] in statuses and at is not None and (p["group_id"] not in since or at < since[p["group_id"]]):
            since[p["group_id"]] = at
    return since


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _ids(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids)


def _more(n: int, shown: int, what: str) -> str:
    return f"; and {n - shown} more {what}" if n > shown else ""
