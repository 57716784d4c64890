"""What the web endpoints show of each cluster, read from the lake once per new commit.

A `ClusterView` holds one cluster's latest committed batches: the group collection (`group_offsets`,
`group_members`, `consumer_groups`, `partition_end_offsets`), the analysis of the latest analysed
group collection (`lag_status_*`, `lag_time_*`), the metadata snapshot's commit row and the tables
KMinion's broker, topic and log-dir series need (`brokers`, `partitions`, `configs`, `replica_sizes`,
`collection_issues`) with `migration` (the fleet page's "migrating to KRaft"), the findings of its latest
analysis (`isr_health`, `leader_balance_cluster`, `controller_health`, `reassignments_in_flight`), and the
open alert incidents (`alerting.state_store`).

`LakeCache.views()` watches the commit logs cheaply: per cluster and commit log, one listing of its
day directories and one of the newest day (a commit is a new file there), plus a stat of the
incident document. Only when that fingerprint changes is the cluster read again, so a scrape every
15 seconds reads nothing between two commits. A cluster whose lake cannot be read is a view with
`error` set (and no figures), never an exception that loses the other clusters.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from kafka_ops.alerting.incidents import ClusterState
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import AlertError, KafkaOpsError, LakeError
from kafka_ops.lake.plan_files import executions_dir
from kafka_ops.lake.schema import (
    ANALYSIS_COMMIT_TABLE,
    COMMIT_TABLE,
    GROUP_COMMIT_TABLE,
    REMEDIATION_AUDIT_TABLE,
    REMEDIATION_PLANS_TABLE,
)
from kafka_ops.lake.store import Lake
from kafka_ops.remediation.lifecycle import Lifecycle, lifecycles
from kafka_ops.report import reads
from kafka_ops.validation.lake_batches import CommittedBatch, days, read_batch_table

Row = dict[str, Any]
WATCHED = (COMMIT_TABLE, GROUP_COMMIT_TABLE, ANALYSIS_COMMIT_TABLE, REMEDIATION_PLANS_TABLE, REMEDIATION_AUDIT_TABLE)
GROUP_TABLES = ("group_offsets", "group_members", "consumer_groups", "partition_end_offsets")
METADATA_TABLES = (
    "brokers",
    "partitions",
    "configs",
    "replica_sizes",
    "collection_issues",
    "migration",
    "probe_results",
)
GROUP_FINDINGS = (
    "lag_status_partitions",
    "lag_status_groups",
    "lag_time_partitions",
    "lag_time_groups",
    "retention_risk_partitions",
)
METADATA_FINDINGS = ("isr_health", "leader_balance_cluster", "controller_health", "reassignments_in_flight")
REQUIRED = {
    "lag_status_partitions": ("group_id", "topic", "partition", "status"),
    "lag_status_groups": ("group_id", "status"),
    "lag_time_partitions": ("group_id", "topic", "partition"),
    "lag_time_groups": ("group_id",),
    "isr_health": ("topic", "partition", "leader", "replicas", "isr", "status"),
}
"""Findings columns the endpoints cannot do without (the snapshot tables are read in their documented schema)."""


@dataclass(frozen=True)
class Batch:
    """One committed batch: its commit row (with `dt`) and the tables read from it (a table the batch
    did not write is absent, so a part built on it is left out rather than shown as zero). Rows are
    made from a table the first time they are asked for: a big table a profile only counts stays Arrow."""

    commit: Row
    tables: dict[str, pa.Table] = field(default_factory=dict)
    _rows: dict[str, list[Row]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def captured_at(self) -> datetime:
        value = self.commit["captured_at"]
        if not isinstance(value, datetime):
            raise LakeError(f"commit row of {self.commit.get('snapshot_id')} has no captured_at")
        return value

    def rows(self, table: str) -> list[Row] | None:
        if table not in self._rows:
            data = self.tables.get(table)
            if data is None:
                return None
            self._rows[table] = data.to_pylist()
        return self._rows[table]


@dataclass(frozen=True)
class ClusterView:
    """One cluster's latest committed batches (None: never collected or analysed), or why it could not be read."""

    cluster: str
    metadata: Batch | None = None
    metadata_analysis: Batch | None = None
    groups: Batch | None = None
    group_analysis: Batch | None = None
    incidents: ClusterState | None = None
    error: str | None = None
    lifecycles: tuple[Lifecycle, ...] | None = None
    """Every remediation plan's lifecycle (None: not read, or unreadable)."""


Fingerprint = tuple[object, ...]


class LakeCache:
    """Every configured cluster's `ClusterView`, re-read only after a new commit (see the module docstring)."""

    def __init__(self, lake: Lake, clusters: Sequence[str], *, reuse: bool = True) -> None:
        self.lake = lake
        self.clusters = tuple(clusters)
        self.incidents = IncidentStore(lake.root)
        self.reuse = reuse
        """False: read every cluster on every call (what a scrape costs without this cache)."""
        self._reads = 0
        self._lock = threading.Lock()
        self._views: dict[str, tuple[Fingerprint, ClusterView]] = {}

    def views(self) -> tuple[list[ClusterView], Fingerprint]:
        """The views in settings order, and a fingerprint of what they were read from (equal
        fingerprints: identical views, so anything rendered from them can be reused)."""
        with self._lock:
            out: list[ClusterView] = []
            prints: list[Fingerprint] = []
            missing = self._missing_root()
            for cluster in self.clusters:
                if missing is not None:
                    out.append(ClusterView(cluster, error=missing))
                    prints.append((cluster, "error", missing))
                    continue
                try:
                    fingerprint = self._fingerprint(cluster)
                except (OSError, KafkaOpsError) as e:
                    out.append(ClusterView(cluster, error=f"cannot list the lake at {self.lake.root}: {e}"))
                    prints.append((cluster, "error", str(e)))
                    self._views.pop(cluster, None)
                    continue
                cached = self._views.get(cluster)
                if cached is None or cached[0] != fingerprint or not self.reuse:
                    self._reads += 1
                    cached = (
                        (*fingerprint, self._reads) if not self.reuse else fingerprint,
                        read_cluster(self.lake, cluster),
                    )
                    self._views[cluster] = cached
                    fingerprint = cached[0]
                out.append(cached[1])
                prints.append(fingerprint)
            return out, tuple(prints)

    def _missing_root(self) -> str | None:
        """Why the lake root cannot be used (a typo in lake_root must not look like an empty, healthy lake)."""
        try:
            kind = self.lake.fs.get_file_info(self.lake.base).type
        except OSError as e:
            return f"cannot read the lake at {self.lake.root}: {e}"
        return None if kind == pafs.FileType.Directory else f"no lake at {self.lake.root} (lake_root in the settings)"

    def _fingerprint(self, cluster: str) -> Fingerprint:
        parts: list[object] = [cluster]
        for table in WATCHED:
            newest = days(self.lake, table, cluster)[:1]
            if not newest:
                parts.append((table, None))
                continue
            folder = f"{self.lake.base}/{table}/cluster={cluster}/dt={newest[0]}"
            names = sorted(i.base_name for i in self.lake.fs.get_file_info(pafs.FileSelector(folder)))
            parts.append((table, newest[0], tuple(names)))
        info = self.lake.fs.get_file_info(self.incidents.path(cluster))
        parts.append(("incidents", info.mtime_ns if info.type == pafs.FileType.File else None, info.size))
        executions = pafs.FileSelector(executions_dir(self.lake, cluster), allow_not_found=True)
        parts.append(
            ("progress", tuple(sorted((i.base_name, i.mtime_ns) for i in self.lake.fs.get_file_info(executions))))
        )
        return tuple(parts)


def read_cluster(lake: Lake, cluster: str) -> ClusterView:
    """`cluster`'s view read from the lake now; a lake error becomes the view's `error`."""
    try:
        metadata = _latest(lake, cluster, COMMIT_TABLE, METADATA_TABLES)
        groups = _latest(lake, cluster, GROUP_COMMIT_TABLE, GROUP_TABLES)
        metadata_analysis = _latest_analysis(lake, cluster, COMMIT_TABLE, METADATA_FINDINGS)
        group_analysis = _latest_analysis(lake, cluster, GROUP_COMMIT_TABLE, GROUP_FINDINGS)
    except (OSError, pa.ArrowException, KafkaOpsError) as e:
        return ClusterView(cluster, error=f"cannot read cluster {cluster!r} from the lake at {lake.root}: {e}")
    try:
        incidents, _ = IncidentStore(lake.root).load(cluster)
    except (AlertError, LakeError, OSError) as e:
        return ClusterView(cluster, metadata, metadata_analysis, groups, group_analysis,
                           error=f"cannot read the alert state of cluster {cluster!r}: {e}")  # fmt: skip
    try:
        plans: tuple[Lifecycle, ...] | None = tuple(lifecycles(lake, cluster))
    except (OSError, pa.ArrowException, KafkaOpsError):
        plans = None  # the plans' figures are left out; the pages name the error when they read them
    return ClusterView(cluster, metadata, metadata_analysis, groups, group_analysis, incidents, lifecycles=plans)


def _latest(lake: Lake, cluster: str, commit_table: str, tables: Sequence[str] = ()) -> Batch | None:
    commit = reads.latest_commit_row(lake, commit_table, cluster)
    if commit is None:
        return None
    return Batch(commit, _tables(lake, cluster, commit_table, commit, tables))


def _latest_analysis(lake: Lake, cluster: str, source: str, tables: Sequence[str]) -> Batch | None:
    """The newest analysis of a `source` batch (`snapshots`: the metadata detectors; `group_snapshots`: the
    group ones); rows written before `source` was recorded are the metadata detectors'."""
    commit = reads.latest_commit_row(
        lake, ANALYSIS_COMMIT_TABLE, cluster, keep=lambda r: (r.get("source") or COMMIT_TABLE) == source
    )
    if commit is None:
        return None
    return Batch(commit, _tables(lake, cluster, ANALYSIS_COMMIT_TABLE, commit, tables))


def _tables(lake: Lake, cluster: str, commit_table: str, commit: Row, tables: Sequence[str]) -> dict[str, pa.Table]:
    batch_id = str(commit["snapshot_id"]) + (".analysis" if commit_table == ANALYSIS_COMMIT_TABLE else "")
    batch = CommittedBatch(cluster, commit_table, batch_id, str(commit["dt"]), commit)
    out = {}
    for table in tables:
        data = read_batch_table(lake, batch, table)
        if data is not None:
            missing = [c for c in REQUIRED.get(table, ()) if c not in data.column_names]
            if missing:
                raise LakeError(
                    f"{table} of batch {batch_id} (cluster {cluster!r}, dt={batch.dt}) lacks column(s) {missing}: "
                    "written by another kafka-ops version? Re-run the analysis"
                )
            out[table] = data
    return out
