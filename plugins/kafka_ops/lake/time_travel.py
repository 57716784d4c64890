"""Time travel on a Delta lake: which batch was the latest committed one at a past moment.

The commit table is read at its Delta version current at that moment (the newest version
committed at or before it), not scanned by `captured_at`: a batch published late, or one whose
publish was still under way, is counted as the readers of the time saw it. The batch's rows are
then read as usual (`DeltaLake.read`): a committed batch's rows never change afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow.dataset as ds

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.schema import COMMIT_TABLE


@dataclass(frozen=True)
class AsOf:
    """The latest batch of a cluster in `commit_table` at Delta `version` (committed at `version_at`)."""

    snapshot_id: str
    captured_at: datetime
    version: int
    version_at: datetime


def batch_as_of(lake: DeltaLake, cluster: str, at: datetime, commit_table: str = COMMIT_TABLE) -> AsOf | None:
    """The batch of `cluster` that was current at `at`; None when the cluster had none yet."""
    if at.tzinfo is None:
        raise LakeError(f"time {at.isoformat()} has no time zone: give one, e.g. {at.isoformat()}+00:00")
    table = lake.open_table(commit_table)
    if table is None:
        raise LakeError(f"no Delta table {commit_table!r} under {lake.root}: is lake_format 'delta' there?")
    versions = sorted(
        (int(h["version"]), datetime.fromtimestamp(int(h["timestamp"]) / 1000, UTC)) for h in table.history()
    )
    before = [(v, t) for v, t in versions if t <= at]
    if not before:
        first = versions[0][1].isoformat() if versions else "nowhere"
        raise LakeError(
            f"{lake.table_uri(commit_table)} has no version at or before {at.isoformat()}: "
            f"its kept history starts at {first}"
        )
    version, version_at = before[-1]
    table.load_as_version(version)
    rows = table.to_pyarrow_dataset().to_table(filter=ds.field("cluster") == cluster)
    if rows.num_rows == 0:
        return None
    latest = rows.sort_by([("captured_at", "descending"), ("snapshot_id", "descending")]).slice(0, 1).to_pylist()[0]
    return AsOf(str(latest["snapshot_id"]), latest["captured_at"], version, version_at)
