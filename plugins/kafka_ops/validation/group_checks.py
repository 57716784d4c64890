"""The consumer-group checks that page straight from a group collection, as it lands: Burrow's rules
without Spark.

The analysis DAG rates consumer groups in a Spark job after the collection commits, then runs the group
gates: on a busy deployment a group that stopped is paged one to three minutes after the collection that
shows it. Burrow's rules need only a partition's last `lag_window` samples or logged commits, which a
few reads of the lake hold. This module reads the collection's window (the group offsets and logged
commits of its committed group collections within `history_hours`, only of the groups the collection
sampled and only the columns the rules use; the quotas of the newest metadata snapshot at or before it),
keeps in Arrow only the rows the rules look at (each partition's last `lag_window` samples and logged
commits, the samples of the last `RECENT_HEAD_S` seconds, and those around its logged commits, whose
lags are interpolated between them), and rates them with `detectors.burrow_rules`, the Spark detector's
rules over plain rows (held equal to it by the detector's tests, and to its findings on whole lakes by
`tests/unit/validation/test_group_checks.py`). The problems are the catalogue's
(`problems.groups`: `no_group_in_err`, `no_group_in_warn`, one per group), so a page reads the same
whichever path sent it; what a collection cannot say by itself (the time behind, retention, hanging
transactions) the analysis adds when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kafka_ops.detectors import burrow_rules
from kafka_ops.detectors.burrow_rules import KEY, Now
from kafka_ops.errors import LakeError
from kafka_ops.lake.schema import COMMIT_TABLE, GROUP_COMMIT_TABLE, TABLES
from kafka_ops.lake.store import Lake
from kafka_ops.problems import groups
from kafka_ops.problems.problem import BatchFindings, Problem, Row
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.lake_batches import CommittedBatch, days, find_commit, find_day_commits, read_batch_table

_SEPARATOR = "\x00"
_COLUMNS = {
    "group_offsets": ["snapshot_id", "captured_at", *burrow_rules.KEY, "committed_offset", "end_offset", "lag",
                      "start_offset"],
    "group_commits": ["snapshot_id", "captured_at", *burrow_rules.KEY, "committed_offset", "committed_at"],
}  # fmt: skip
CHECKS = (groups.IN_ERR, groups.IN_WARN)
"""The problems (gate names, the prefix of their per-group alert keys) a group collection pages by itself."""
_FAILS = {groups.IN_ERR: "ERR", groups.IN_WARN: "WARN"}


@dataclass(frozen=True)
class CollectionLook:
    """What one group collection says by itself: its findings and each failing group's problem, by
    alert key (`<check>:<group id>`)."""

    findings: BatchFindings
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
    with lake.pinned():  # one consistent view of the tables, each opened once
        return _look(lake, cluster, group_snapshot_id, thresholds)


def _look(lake: Lake, cluster: str, group_snapshot_id: str, thresholds: Thresholds) -> CollectionLook:
    batch = find_commit(lake, GROUP_COMMIT_TABLE, cluster, group_snapshot_id)
    if batch is None:
        raise LakeError(f"no group collection {group_snapshot_id!r} of cluster {cluster!r} is committed in {lake.root}")
    now = batch.captured_at.astimezone(UTC)
    since = now - timedelta(hours=thresholds.history_hours)
    rules = burrow_rules.Now(group_snapshot_id, now, int(thresholds.lag_window), thresholds.lag_allowed)
    latest = {t: _rows(read_batch_table(lake, batch, t)) for t in ("group_members", "consumer_groups")}
    window = _window_ids(lake, batch, since)
    # the window holds the collection itself: its samples are the partitions rated
    offsets = _history(lake, batch, "group_offsets", window)
    none = TABLES["group_offsets"].empty_table().select(_COLUMNS["group_offsets"])
    samples = _samples(offsets if offsets is not None else none)
    rated_now = samples.filter(pc.equal(samples["snapshot_id"], group_snapshot_id))
    current = pc.unique(_keys(rated_now))
    groups_sampled = sorted(pc.unique(rated_now["group_id"]).to_pylist())
    commits = _needed_commits(_history(lake, batch, "group_commits", window, groups_sampled), current, rules)
    partitions, rated = burrow_rules.lag_status(
        rules,
        offsets=_needed_samples(samples, current, commits, rules),
        commits=commits,
        members=latest["group_members"],
        groups=latest["consumer_groups"],
        quotas=_quotas(lake, cluster, since, now),
    )
    findings = BatchFindings(group_snapshot_id, now, {"lag_status_partitions": partitions, "lag_status_groups": rated})
    return CollectionLook(findings, problems(findings))


def problems(findings: BatchFindings) -> dict[str, Problem]:
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
    lake: Lake, batch: CommittedBatch, table: str, window: Mapping[str, list[str]], sampled: list[str] | None = None
) -> pa.Table | None:
    """`table`'s columns the rules read, of the window's committed collections (and of the groups in
    `sampled`, when given)."""
    if sampled is not None and not sampled:
        return None
    parts = []
    for dt, ids in window.items():
        where = pc.field("snapshot_id").isin(ids)
        if sampled is not None:
            where &= pc.field("group_id").isin(sampled)
        day = lake.read_day(table, batch.cluster, dt, columns=_COLUMNS[table], where=where)
        if day is not None:
            parts.append(day)
    return pa.concat_tables(parts) if parts else None


def _needed_commits(commits: pa.Table | None, current: pa.Array, now: Now) -> list[Row]:
    """The distinct logged commits up to now of the `current` partitions, only each one's last
    `lag_window` (all the rules read of the log)."""
    if commits is None:
        return []
    until = pa.scalar(now.captured_at, commits.schema.field("committed_at").type)
    commits = commits.filter(
        pc.and_(pc.is_valid(commits["committed_offset"]), pc.less_equal(commits["committed_at"], until))
    )
    keys = _keys(commits)
    commits = commits.append_column("key", keys).filter(pc.is_in(keys, current))
    distinct = commits.group_by(["key", *KEY, "committed_at", "committed_offset"]).aggregate([])
    newest = distinct.sort_by(
        [("key", "ascending"), ("committed_at", "descending"), ("committed_offset", "descending")]
    )
    return newest.filter(_ranks(newest["key"]) <= now.lag_window).drop_columns(["key"]).to_pylist()


def _needed_samples(offsets: pa.Table, current: pa.Array, commits: list[Row], now: Now) -> list[Row]:
    """The sample rows of the `current` partitions the rules read: each one's last `lag_window`, those of
    the last `RECENT_HEAD_S` seconds, and, for a partition rated on its logged commits, those from the one
    just before its oldest commit on (the end offsets a commit's lag is interpolated between)."""
    keys = _keys(offsets)
    offsets = offsets.append_column("key", keys).filter(pc.is_in(keys, current))
    newest = offsets.sort_by([("key", "ascending"), ("captured_at", "descending"), ("snapshot_id", "descending")])
    if not newest.num_rows:
        return []
    key = newest["key"].to_numpy(zero_copy_only=False)
    at = pc.cast(newest["captured_at"], pa.timestamp("us", "UTC")).cast(pa.int64()).to_numpy()
    first = np.r_[True, key[1:] != key[:-1]]
    starts, run = np.flatnonzero(first), np.cumsum(first) - 1
    oldest_commit: dict[str, int] = {}
    for c in commits:
        name, t = _key_name(c), burrow_rules.micros(c["committed_at"])
        oldest_commit[name] = min(oldest_commit.get(name, t), t)
    # per partition (run of rows, newest first): its oldest logged commit, and the newest sample at or before it
    logged = np.array([k in oldest_commit for k in key[starts]], dtype=bool)
    oldest = np.array([oldest_commit.get(k, 0) for k in key[starts]], dtype=np.int64)
    floor = np.maximum.reduceat(np.where(at <= oldest[run], at, np.iinfo(np.int64).min), starts)
    recent = burrow_rules.micros(now.captured_at) - burrow_rules.RECENT_HEAD_S * 1_000_000
    rank = np.arange(len(key)) - starts[run] + 1
    keep = (rank <= now.lag_window) | (at > recent) | (logged[run] & (at >= floor[run]))
    return newest.filter(pa.array(keep)).drop_columns(["key"]).to_pylist()


def _keys(table: pa.Table) -> pa.Array:
    """Each row's partition as one string (group, topic, partition), `_key_name`'s."""
    parts = [table["group_id"], table["topic"], pc.cast(table["partition"], pa.string())]
    return pc.binary_join_element_wise(*parts, _SEPARATOR).combine_chunks()


def _key_name(row: Row) -> str:
    return _SEPARATOR.join((str(row["group_id"]), str(row["topic"]), str(row["partition"])))


def _ranks(keys: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """1, 2, ... within each run of equal keys (the table sorted by key)."""
    key = keys.to_numpy(zero_copy_only=False)
    if not len(key):
        return np.array([], dtype=np.int64)
    first = np.r_[True, key[1:] != key[:-1]]
    return np.arange(len(key)) - np.flatnonzero(first)[np.cumsum(first) - 1] + 1


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


def _samples(offsets: pa.Table) -> pa.Table:
    """`burrow_rules.samples_of` over a table: a share group's position as its committed offset, and only
    rows with a position and a lag."""
    share = pc.and_(pc.is_valid(offsets["start_offset"]), pc.is_null(offsets["committed_offset"]))
    position = pc.if_else(share, pc.subtract(offsets["end_offset"], offsets["lag"]), offsets["committed_offset"])
    offsets = offsets.set_column(offsets.schema.get_field_index("committed_offset"), "committed_offset", position)
    return offsets.filter(pc.and_(pc.is_valid(offsets["committed_offset"]), pc.is_valid(offsets["lag"])))


def _rows(table: pa.Table | None) -> list[Row]:
    return [] if table is None else table.to_pylist()


def _aware(at: object) -> datetime:
    if not isinstance(at, datetime):
        raise LakeError(f"a commit row's captured_at is {at!r}, not a time")
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
