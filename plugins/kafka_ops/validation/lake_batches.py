"""Read one committed batch of the lake, without scanning a table's history.

`Lake.read(table, cluster, [id])` reads every file of `table` for the cluster and then filters: fine
for tests, too slow every 5 minutes on a lake holding days of 20,000-partition snapshots. Here the day
partition holding the batch's commit row is found first (one listing, newest day first), and only
that batch's rows are read (`Lake.read_batch`: its own file on the Parquet lake, its day partition's
files on the Delta lake). Committed-only, like `Lake.read`: without its commit row a batch does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pyarrow as pa

from kafka_ops.errors import LakeError
from kafka_ops.lake.store import Lake


@dataclass(frozen=True)
class CommittedBatch:
    """Where a committed batch lives: its commit log, day partition, and commit row."""

    cluster: str
    commit_table: str
    batch_id: str
    dt: str
    commit: dict[str, object]

    @property
    def captured_at(self) -> datetime:
        value = self.commit["captured_at"]
        if not isinstance(value, datetime):
            raise LakeError(f"commit row of {self.batch_id} in {self.commit_table} has no captured_at")
        return value


def days(lake: Lake, table: str, cluster: str) -> list[str]:
    """The `dt` values under `<table>/cluster=<cluster>`, newest first (none: [])."""
    return lake.days(table, cluster)


def find_commit(lake: Lake, commit_table: str, cluster: str, batch_id: str) -> CommittedBatch | None:
    """The committed batch `batch_id` of `commit_table`, or None when it was never committed."""
    for dt in days(lake, commit_table, cluster):
        commit = lake.batch_commit(commit_table, cluster, dt, batch_id)
        if commit is not None:
            return CommittedBatch(cluster, commit_table, batch_id, dt, commit)
    return None


def read_batch_table(lake: Lake, batch: CommittedBatch, table: str) -> pa.Table | None:
    """`table`'s rows of `batch` (documented schema when the table is documented), or None when the
    batch wrote no such table (an empty table is still a table: rows = 0; see `Lake.read_batch`)."""
    return lake.read_batch(table, batch.cluster, batch.dt, batch.batch_id, batch.commit)


def previous_commit(lake: Lake, commit_table: str, batch: CommittedBatch) -> dict[str, object] | None:
    """The commit row just before `batch` in its log, ordered by (captured_at, snapshot_id); only the
    days up to `batch`'s are read, newest first, until one holds an earlier row."""
    key = (batch.captured_at, str(batch.commit["snapshot_id"]))
    for dt in days(lake, commit_table, batch.cluster):
        if dt > batch.dt:
            continue
        rows = find_day_commits(lake, commit_table, batch.cluster, dt)
        earlier = [r for r in rows if (r["captured_at"], r["snapshot_id"]) < key]
        if earlier:
            return max(earlier, key=lambda r: (r["captured_at"], r["snapshot_id"]))
    return None


def find_day_commits(lake: Lake, commit_table: str, cluster: str, dt: str) -> list[dict[str, object]]:
    """Every commit row of `commit_table` for `cluster` on day `dt`, unordered."""
    rows = lake.read_day(commit_table, cluster, dt)
    return [] if rows is None else rows.to_pylist()
