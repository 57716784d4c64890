"""The validation steps around the Spark analysis, as the analysis DAG runs them for one cluster:
integrity validation → (Spark detectors) → health gates; then `alerting.firing` turns what they found
into alerts, and the report shows it.

Each step is a plain function of the lake (the DAG tasks are thin wrappers), returns data small
enough for XCom, and treats an unhealthy cluster as a result: only pipeline errors raise.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE, COMMIT_TABLE, GROUP_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.problems.problem import Problem
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import GateReport, GateResult, run_gates
from kafka_ops.validation.integrity import (
    IntegrityThresholds,
    validate_group_snapshot,
    validate_snapshot,
    validation_of,
)


def validate_batches(
    lake: Lake,
    cluster: str,
    at: datetime,
    *,
    snapshot_id: str | None = None,
    group_snapshot_id: str | None = None,
    thresholds: Thresholds | None = None,
    keep_recorded: bool = False,
) -> dict[str, Any]:
    """Validate the given (else the latest) ZooKeeper snapshot and group collection of `cluster`;
    each verdict is recorded in `snapshot_validations`. Returns the verdicts.

    With `keep_recorded` (a run as of a past time), a batch validated before keeps its recorded
    verdict: it is returned as it was, and nothing is validated or written again. A verdict is keyed
    by its batch's id, so validating a past batch can never change another batch's verdict."""
    limits = thresholds or Thresholds()
    integrity = IntegrityThresholds(int(limits.max_collection_issues), int(limits.max_group_collection_issues))
    out: dict[str, Any] = {"cluster": cluster}
    sid = snapshot_id or lake.latest_snapshot_id(cluster, COMMIT_TABLE)
    if sid is not None:
        recorded = validation_of(lake, cluster, sid) if keep_recorded else None
        out[COMMIT_TABLE] = (
            recorded_verdict(cluster, recorded)
            if recorded is not None
            else validate_snapshot(lake, cluster, sid, thresholds=integrity, validated_at=at).summary()
        )
    gid = group_snapshot_id or lake.latest_snapshot_id(cluster, GROUP_COMMIT_TABLE)
    if gid is not None:
        recorded = validation_of(lake, cluster, gid) if keep_recorded else None
        out[GROUP_COMMIT_TABLE] = (
            recorded_verdict(cluster, recorded)
            if recorded is not None
            else validate_group_snapshot(lake, cluster, gid, thresholds=integrity, validated_at=at).summary()
        )
    return out


def recorded_verdict(cluster: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A `snapshot_validations` row as the summary a validation returns, with `recorded_at` (when it
    was validated)."""
    details = json.loads(row["details"] or "{}").get("failed", {})
    return {
        "cluster": cluster,
        "snapshot_id": row["snapshot_id"],
        "source": row["source"],
        "trusted": bool(row["trusted"]),
        "failed": {name: details.get(name, {}).get("count") for name in row["failed"] or ()},
        "data_docs": row["data_docs"],
        "recorded_at": row["validated_at"].isoformat(),
    }


def latest_analysed(lake: Lake, cluster: str, source: str) -> tuple[str, datetime] | None:
    """(batch id, capture time) of the newest batch of `source` with published findings."""
    runs = lake.latest_commits(cluster, ANALYSIS_COMMIT_TABLE, keep=lambda r: (r["source"] or COMMIT_TABLE) == source)
    if not runs:
        return None
    return str(runs[0]["snapshot_id"]), cast(datetime, runs[0]["captured_at"])


def health_gates(lake: Lake, cluster: str, thresholds: Thresholds, at: datetime) -> GateReport | None:
    """The gates over the latest analysed snapshot (and group collection, when one was analysed);
    None before the first ZooKeeper analysis."""
    snapshot = latest_analysed(lake, cluster, COMMIT_TABLE)
    if snapshot is None:
        return None
    groups = latest_analysed(lake, cluster, GROUP_COMMIT_TABLE)
    return run_gates(
        lake,
        cluster,
        snapshot[0],
        group_snapshot_id=groups[0] if groups else None,
        thresholds=thresholds,
        validated_at=at,
    )


def gates_of(
    lake: Lake,
    cluster: str,
    thresholds: Thresholds,
    at: datetime,
    *,
    snapshot_id: str | None,
    group_snapshot_id: str | None = None,
) -> GateReport | None:
    """The gates over the analyses of the named batches (an as-of run's, not the latest); None
    without a ZooKeeper snapshot."""
    if snapshot_id is None:
        return None
    return run_gates(
        lake, cluster, snapshot_id, group_snapshot_id=group_snapshot_id, thresholds=thresholds, validated_at=at
    )


def gate_report_to_dict(report: GateReport) -> dict[str, Any]:
    """Every field, JSON-ready (datetimes as ISO strings): how the DAG passes gates between tasks."""
    results = [
        {
            **dataclasses.asdict(r),
            "since": r.since.isoformat() if r.since else None,
            "problems": [{**dataclasses.asdict(p), "since": p.since.isoformat()} for p in r.problems],
        }
        for r in report.results
    ]
    return {**dataclasses.asdict(report), "results": results}


def gate_report_from_dict(data: Mapping[str, Any]) -> GateReport:
    """The `GateReport` `gate_report_to_dict` wrote, its results' problems `Problem`s again (the alerts
    read a group gate's problem per group from them)."""
    results = tuple(
        GateResult(
            **{
                **r,
                "rows": tuple(r["rows"]),
                "since": datetime.fromisoformat(r["since"]) if r["since"] else None,
                "problems": tuple(
                    Problem(**{**p, "rows": tuple(p["rows"]), "since": datetime.fromisoformat(p["since"])})
                    for p in r.get("problems", ())
                ),
            }
        )
        for r in data["results"]
    )
    return GateReport(**{**data, "results": results})
