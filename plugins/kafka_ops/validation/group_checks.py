"""The consumer-group checks that page straight from a group collection, as it lands: Burrow's rules
without Spark.

The analysis DAG rates consumer groups in a Spark job after the collection commits, then runs the group
gates: on a busy deployment a group that stopped is paged one to three minutes after the collection that
shows it. Burrow's rules need only a partition's last `lag_window` samples or logged commits, which a
few reads of the lake hold. This module reads the collection's window (its committed group collections
within `history_hours`, only the groups the collection sampled, and the quotas of the newest metadata
snapshot at or before it) and rates it with `detectors.burrow_rules`, the Spark detector's rules over
plain rows (held equal to it by the detector's tests). The problems are the catalogue's
(`problems.groups`: `no_group_in_err`, `no_group_in_warn`, one per group), so a page reads the same
whichever path sent it; what a collection cannot say by itself (the time behind, retention, hanging
transactions) the analysis adds when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafka_ops.detectors import burrow_rules
from kafka_ops.errors import LakeError
from kafka_ops.lake.schema import COMMIT_TABLE, GROUP_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.problems import groups
from kafka_ops.problems.problem import Problem, Row
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.lake_batches import CommittedBatch, days, find_commit, find_day_commits, read_batch_table

CHECKS = (groups.IN_ERR, groups.IN_WARN)
"""The problems (gate names, the prefix of their per-group alert keys) a group collection pages by itself."""
_FAILS = {groups.IN_ERR: "ERR", groups.IN_WARN: "WARN"}


@dataclass(frozen=True)
class CollectionFindings:
    """One group collection's `lag_status_partitions` and `lag_status_groups` rows as the catalogue reads
    findings (`problems.problem.FindingsRows`)."""

    snapshot_id: str
    captured_at: datetime
    tables: Mapping[str, list[Row]] = field(default_factory=dict)

    def rows(self, table: str) -> list[Row] | None:
        return self.tables.get(table)


@dataclass(frozen=True)
class CollectionLook:
    """What one group collection says by itself: its findings and each failing group's problem, by
    alert key (`<check>:<group id>`)."""

    findings: CollectionFindings
    problems: Mapping[str, Problem]

    @property
    def rated(self) -> tuple[str, ...]:
        """Every group it rated (those not in `problems` are OK by these checks)."""
        return tuple(str(r["group_id"]) for r in self.findings.rows("lag_status_groups") or [])

    def summary(self) -> dict[str, Any]:
        """The XCom payload: the groups rated and the failing ones' keys."""
        return {
            "group_snapshot_id": self.findings.snapshot_id,
            "captured_at": self.findings.captured_at.isoformat(),
            "groups": len(self.rated),
            "problems": sorted(self.problems),
        }


def look(lake: Lake, cluster: str, group_snapshot_id: str, thresholds: Thresholds) -> CollectionLook:
    """Burrow's rules over committed group collection `group_snapshot_id` of `cluster` and its window;
    `LakeError` naming it when it was never committed."""
    batch = find_commit(lake, GROUP_COMMIT_TABLE, cluster, group_snapshot_id)
    if batch is None:
        raise LakeError(f"no group collection {group_snapshot_id!r} of cluster {cluster!r} is committed in {lake.root}")
    now = batch.captured_at.astimezone(UTC)
    since = now - timedelta(hours=thresholds.history_hours)
    latest = {t: _rows(read_batch_table(lake, batch, t)) for t in ("group_offsets", "group_members", "consumer_groups")}
    sampled = sorted({str(s["group_id"]) for s in burrow_rules.samples_of(latest["group_offsets"])})
    window = _window_ids(lake, batch, since)
    history = {t: _history(lake, batch, t, window, sampled) for t in ("group_offsets", "group_commits")}
    partitions, rated = burrow_rules.lag_status(
        burrow_rules.Now(group_snapshot_id, now, int(thresholds.lag_window), thresholds.lag_allowed),
        offsets=history["group_offsets"],
        commits=history["group_commits"],
        members=latest["group_members"],
        groups=latest["consumer_groups"],
        quotas=_quotas(lake, cluster, since, now),
    )
    findings = CollectionFindings(
        group_snapshot_id, now, {"lag_status_partitions": partitions, "lag_status_groups": rated}
    )
    return CollectionLook(findings, problems(findings))


def problems(findings: CollectionFindings) -> dict[str, Problem]:
    """Each group in ERR or WARN, its catalogue problem by alert key."""
    out: dict[str, Problem] = {}
    rated = findings.rows("lag_status_groups") or []
    for check, status in _FAILS.items():
        failing = [r for r in rated if r["status"] == status]
        out |= {f"{check}:{g}": p for g, p in groups.per_group(failing, findings).items()}
    return out


def _window_ids(lake: Lake, batch: CommittedBatch, since: datetime) -> dict[str, list[str]]:
    """Day → the ids of the group collections committed on it within [since, the batch's capture time]."""
    until = batch.captured_at
    out: dict[str, list[str]] = {}
    for dt in days(lake, GROUP_COMMIT_TABLE, batch.cluster):
        if dt > batch.dt:
            continue
        if dt < since.date().isoformat():
            break
        ids = [str(r["snapshot_id"]) for r in find_day_commits(lake, GROUP_COMMIT_TABLE, batch.cluster, dt)
               if since <= _aware(r["captured_at"]) <= until]  # fmt: skip
        if ids:
            out[dt] = ids
    return out


def _history(
    lake: Lake, batch: CommittedBatch, table: str, window: Mapping[str, list[str]], sampled: list[str]
) -> list[Row]:
    """`table`'s rows of the window's committed collections, only of the groups in `sampled`."""
    rows: list[Row] = []
    for dt, ids in window.items():
        where = pc.field("snapshot_id").isin(ids) & pc.field("group_id").isin(sampled)
        rows += _rows(lake.read_day(table, batch.cluster, dt, where=where))
    return rows


def _quotas(lake: Lake, cluster: str, since: datetime, until: datetime) -> list[Row]:
    """The `quotas` rows of the newest metadata snapshot captured in [since, until] (none: [])."""
    for dt in days(lake, COMMIT_TABLE, cluster):
        if dt > until.date().isoformat():
            continue
        if dt < since.date().isoformat():
            break
        commits = [c for c in find_day_commits(lake, COMMIT_TABLE, cluster, dt)
                   if since <= _aware(c["captured_at"]) <= until]  # fmt: skip
        if commits:
            newest = max(commits, key=lambda c: (c["captured_at"], c["snapshot_id"]))
            found = CommittedBatch(cluster, COMMIT_TABLE, str(newest["snapshot_id"]), dt, newest)
            return _rows(read_batch_table(lake, found, "quotas"))
    return []


def _rows(table: pa.Table | None) -> list[Row]:
    return [] if table is None else table.to_pylist()


def _aware(at: object) -> datetime:
    if not isinstance(at, datetime):
        raise LakeError(f"a commit row's captured_at is {at!r}, not a time")
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
