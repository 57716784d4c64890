"""Time travel on a Delta lake: which batch was the latest committed one at a past moment.

The commit table is read at its Delta version current at that moment (the newest version
committed at or before it), not scanned by `captured_at`: a batch published late, or one whose
publish was still under way, is counted as the readers of the time saw it. The batch's rows are
then read as usual (`DeltaLake.read`): a committed batch's rows never change afterwards. An
analysis as of a past time (`analysis.runner.analyse(as_of=...)`) reads every input table at its
version current then (`version_as_of`), so rows written since (even of older days) are not seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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
    version, version_at = _version_at(lake, commit_table, at, required=True)
    rows = _rows_at(lake, commit_table, cluster, version)
    if not rows:
        return None
    latest = max(rows, key=lambda r: (r["captured_at"], r["snapshot_id"]))
    return AsOf(str(latest["snapshot_id"]), latest["captured_at"], version, version_at)


def commit_rows_as_of(
    lake: DeltaLake, cluster: str, at: datetime, commit_table: str = COMMIT_TABLE
) -> list[dict[str, Any]]:
    """The rows of commit table `commit_table` for `cluster` as they were at `at` (none: [])."""
    version, _ = _version_at(lake, commit_table, at, required=True)
    return _rows_at(lake, commit_table, cluster, version)


def version_as_of(lake: DeltaLake, table: str, at: datetime) -> int | None:
    """The Delta version of `table` current at `at`; None when the table did not exist yet then."""
    version, _ = _version_at(lake, table, at, required=False)
    return version if version >= 0 else None


def _version_at(lake: DeltaLake, table: str, at: datetime, *, required: bool) -> tuple[int, datetime]:
    """The newest version of `table` committed at or before `at`, and when; (-1, at) when there is none
    and not `required` (a table created later, or not at all)."""
    if at.tzinfo is None:
        raise LakeError(f"time {at.isoformat()} has no time zone: give one, e.g. {at.isoformat()}+00:00")
    delta = lake.open_table(table)
    if delta is None:
        if required:
            raise LakeError(f"no Delta table {table!r} under {lake.root}: is lake_format 'delta' there?")
        return -1, at
    versions = sorted(
        (int(h["version"]), datetime.fromtimestamp(int(h["timestamp"]) / 1000, UTC)) for h in delta.history()
    )
    before = [(v, t) for v, t in versions if t <= at]
    if before:
        return before[-1]
    if versions and versions[0][0] == 0 and not required:
        return -1, at  # created after `at`: nothing of it was visible then
    first = versions[0][1].isoformat() if versions else "nowhere"
    raise LakeError(
        f"{lake.table_uri(table)} has no version at or before {at.isoformat()}: its kept history starts at {first}"
    )


def _rows_at(lake: DeltaLake, table: str, cluster: str, version: int) -> list[dict[str, Any]]:
    delta = lake.open_table(table)
    if delta is None or version < 0:
        return []
    delta.load_as_version(version)
    return lake.dataset(delta, table).to_table(filter=ds.field("cluster") == cluster).to_pylist()
