"""`kafka_ops_group_retention_eta_seconds` and `kafka_ops_group_records_lost`, from the latest group analysis'
`retention_risk_partitions` as the lake cache holds it."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa

from kafka_ops.web.figures import cluster_figures
from kafka_ops.web.lake_cache import Batch, ClusterView
from kafka_ops.web.profiles import own_metrics
from tests.unit.snapshots import GROUPS_AT
from tests.unit.validation.findings import SCHEMAS, retention_partition

TABLE = "retention_risk_partitions"


def view(rows: list[dict[str, object]] | None) -> ClusterView:
    """A cluster whose latest group collection and its analysis were captured at GROUPS_AT; the analysis holds
    `rows` (None: no such table, as from an analysis before the detector)."""
    commit = {"snapshot_id": "g1", "captured_at": GROUPS_AT}
    tables = {} if rows is None else {TABLE: pa.Table.from_pylist(rows, schema=SCHEMAS[TABLE])}
    return ClusterView("c1", groups=Batch(commit), group_analysis=Batch(commit, tables))


def samples(rows: list[dict[str, object]] | None) -> dict[str, dict[tuple[str, ...], float]]:
    families = own_metrics([cluster_figures(view(rows), GROUPS_AT, timedelta(minutes=5))])
    wanted = ("kafka_ops_group_retention_eta_seconds", "kafka_ops_group_records_lost")
    return {f.name: {tuple(s.labels.values()): s.value for s in f.samples} for f in families if f.name in wanted}


def test_eta_with_its_basis_and_records_lost_per_group_and_partition() -> None:
    rows = [
        {**retention_partition("billing", "orders", 2, "lost", committed=3_000, start=4_200, end=9_000,
                               severity="critical", lost_since=GROUPS_AT), "snapshot_id": "g1"},
        {**retention_partition("late", "orders", 1, "at_risk", committed=100, start=0, end=500, severity="warning",
                               eta=2_400.0, basis="retention.ms"), "snapshot_id": "g1"},
        {**retention_partition("sized", "orders", 5, "ok", committed=100, start=0, end=500, severity="ok",
                               eta=90_000.0, basis="retention.bytes"), "snapshot_id": "g1"},
        {**retention_partition("blind", "orders", 0, "unknown", committed=100, start=0, end=500, severity="info"),
         "snapshot_id": "g1"},
    ]  # fmt: skip
    found = samples(rows)
    assert found["kafka_ops_group_retention_eta_seconds"] == {
        ("c1", "late", "orders", "1", "retention.ms"): 2_400.0,
        ("c1", "sized", "orders", "5", "retention.bytes"): 90_000.0,
    }
    # 0 where retention applies and nothing is lost; no sample where the analysis could not tell
    assert found["kafka_ops_group_records_lost"] == {
        ("c1", "billing", "orders", "2"): 1_200.0,
        ("c1", "late", "orders", "1"): 0.0,
        ("c1", "sized", "orders", "5"): 0.0,
    }


def test_no_retention_findings_no_samples() -> None:
    assert samples(None) == {"kafka_ops_group_retention_eta_seconds": {}, "kafka_ops_group_records_lost": {}}
