"""`kafka_ops_group_lag_velocity` and `kafka_ops_group_time_to_close_seconds`, from the latest group analysis'
`lag_time_groups` as the lake cache holds it."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa

from kafka_ops.web.figures import cluster_figures
from kafka_ops.web.lake_cache import Batch, ClusterView
from kafka_ops.web.profiles import own_metrics
from tests.unit.snapshots import GROUPS_AT

WANTED = ("kafka_ops_group_lag_velocity", "kafka_ops_group_time_to_close_seconds")


def samples(rows: list[dict[str, object]] | None) -> dict[str, dict[tuple[str, ...], float]]:
    commit = {"snapshot_id": "g1", "captured_at": GROUPS_AT}
    tables = {} if rows is None else {"lag_time_groups": pa.Table.from_pylist(rows)}
    view = ClusterView("c1", groups=Batch(commit), group_analysis=Batch(commit, tables))
    families = own_metrics([cluster_figures(view, GROUPS_AT, timedelta(minutes=5))])
    return {f.name: {tuple(s.labels.values()): s.value for s in f.samples} for f in families if f.name in WANTED}


def trend(group_id: str, velocity: float | None, name: str, closes: float | None) -> dict[str, object]:
    return {"snapshot_id": "g1", "group_id": group_id, "lag_velocity": velocity, "lag_trend": name,
            "time_to_close_seconds": closes}  # fmt: skip


def test_velocity_with_its_trend_and_the_time_to_close_where_the_lag_closes() -> None:
    found = samples([
        trend("closing", -12.5, "closing", 300.0),
        trend("growing", 3.0, "growing", None),
        trend("caught", 0.0, "caught_up", 0.0),
        trend("new", None, "unknown", None),
    ])  # fmt: skip
    assert found["kafka_ops_group_lag_velocity"] == {
        ("c1", "closing", "closing"): -12.5,
        ("c1", "growing", "growing"): 3.0,
        ("c1", "caught", "caught_up"): 0.0,
    }
    assert found["kafka_ops_group_time_to_close_seconds"] == {("c1", "closing"): 300.0, ("c1", "caught"): 0.0}


def test_no_lag_time_findings_no_samples() -> None:
    assert samples(None) == {name: {} for name in WANTED}
