"""When to run a preferred-leader election without an operator: persistent, fixable leader imbalance.

A cluster with `auto_remediation = true` (settings; off by default, and only with `writes_enabled`)
gets an automatic preferred election once the last `auto_election_after_runs` analyses of its
metadata snapshots in a row all found leader imbalance an election can fix: in each one's
`leader_balance_cluster` row, the rule of the cluster's own controller triggered (ZooKeeper: some
broker's share of partitions led by another broker is above `leader.imbalance.per.broker.percentage`;
KRaft: any partition is off its preferred replica) and at least one non-preferred partition is
`fixable` (its preferred replica is alive and in the ISR). One clean
analysis, or one that did not run the leader-balance detector, starts the count again, so a
transient imbalance (a broker restarting) never triggers an election on its own.

`persistent_imbalance` is the pure rule; `should_auto_elect` reads its input from the lake. The
caller (the analysis DAG) checks the settings and triggers the election DAG; the election itself is
planned on a fresh, validated snapshot and goes through the executor's every safety check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_ops.errors import ConfigError
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.report.reads import findings_table

LEADER_BALANCE_TABLE = "leader_balance_cluster"
_RULE = {"zookeeper": "zk_rule_triggered", "kraft": "kraft_rule_triggered"}
"""The controller's own rule, by the kind of cluster the snapshot came from (`leader_balance_cluster.source`)."""
SNAPSHOTS_SOURCE = "snapshots"


@dataclass(frozen=True)
class AutoElection:
    """The decision, why, and the analysed snapshots it looked at (newest first)."""

    elect: bool
    reason: str
    snapshot_ids: tuple[str, ...]


def persistent_imbalance(analyses: Sequence[Mapping[str, Any]], runs: int) -> AutoElection:
    """Pure: `analyses` are the latest analyses, newest first, each `snapshot_id` plus the fields of
    its `leader_balance_cluster` row (only `snapshot_id` when it has none). Elect when the first
    `runs` of them all show fixable imbalance under their controller's rule."""
    _check_runs(runs)
    window = list(analyses[:runs])
    ids = tuple(str(a["snapshot_id"]) for a in window)
    if len(window) < runs:
        return AutoElection(False, f"only {len(window)} analysed snapshot(s), {runs} needed", ids)
    for row in window:
        if "zk_rule_triggered" not in row:
            return AutoElection(False, f"snapshot {row['snapshot_id']}: no leader-balance finding", ids)
        if not row[_RULE.get(row.get("source") or "zookeeper", "zk_rule_triggered")]:
            return AutoElection(False, f"snapshot {row['snapshot_id']}: leaders within the imbalance threshold", ids)
        if not row.get("fixable"):
            return AutoElection(
                False, f"snapshot {row['snapshot_id']}: imbalanced, but no partition is fixable by an election", ids
            )
    return AutoElection(
        True,
        f"fixable leader imbalance in each of the last {runs} analyses ({window[0]['fixable']} partitions now)",
        ids,
    )


def should_auto_elect(lake: Lake, cluster: str, runs: int) -> AutoElection:
    """`persistent_imbalance` over `cluster`'s latest `runs` published analyses of ZooKeeper snapshots."""
    _check_runs(runs)
    latest = lake.latest_commits(
        cluster, ANALYSIS_COMMIT_TABLE, runs, keep=lambda r: (r["source"] or SNAPSHOTS_SOURCE) == SNAPSHOTS_SOURCE
    )
    rows: dict[str, dict[str, Any]] = {}
    for analysis in latest:
        if LEADER_BALANCE_TABLE in json.loads(str(analysis["findings"] or "{}")):
            found = findings_table(lake, cluster, analysis, LEADER_BALANCE_TABLE)
            rows.update({r["snapshot_id"]: r for r in (found.to_pylist() if found is not None else [])})
    return persistent_imbalance(
        [rows.get(str(r["snapshot_id"]), {"snapshot_id": r["snapshot_id"]}) for r in latest], runs
    )


def _check_runs(runs: object) -> None:
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ConfigError(f"auto_election_after_runs must be a whole number >= 1, got {runs!r}")
