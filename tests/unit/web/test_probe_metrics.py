"""`kafka_ops_probe_produce_seconds`, `_end_to_end_seconds` and `_failed`, per probe partition and the broker
leading it, from the latest metadata snapshot's `probe_results` as the lake cache holds it."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa

from kafka_ops.lake.schema import METADATA_TABLES
from kafka_ops.web.figures import cluster_figures
from kafka_ops.web.lake_cache import Batch, ClusterView
from kafka_ops.web.profiles import own_metrics
from tests.unit.snapshots import AT

WANTED = ("kafka_ops_probe_produce_seconds", "kafka_ops_probe_end_to_end_seconds", "kafka_ops_probe_failed")


def samples(rows: list[dict[str, object]]) -> dict[str, dict[tuple[str, ...], float]]:
    schema = METADATA_TABLES["probe_results"]
    table = pa.Table.from_pylist([{"snapshot_id": "s1", "captured_at": AT, **r} for r in rows], schema=schema)
    view = ClusterView("c1", metadata=Batch({"snapshot_id": "s1", "captured_at": AT}, {"probe_results": table}))
    families = own_metrics([cluster_figures(view, AT, timedelta(minutes=5))])
    return {f.name: {tuple(s.labels.values()): s.value for s in f.samples} for f in families if f.name in WANTED}


def test_latencies_where_the_probe_went_through_and_a_failure_where_it_did_not() -> None:
    found = samples([
        {"topic": "probe", "partition": 0, "leader": 1, "produce_ms": 4.5, "e2e_ms": 12.0, "error": None},
        {"topic": "probe", "partition": 1, "leader": 2, "produce_ms": None, "e2e_ms": None,
         "error": "MessageSizeTooLargeError: [Error 10]"},
    ])  # fmt: skip
    assert found["kafka_ops_probe_produce_seconds"] == {("c1", "1", "probe", "0"): 0.0045}
    assert found["kafka_ops_probe_end_to_end_seconds"] == {("c1", "1", "probe", "0"): 0.012}
    assert found["kafka_ops_probe_failed"] == {("c1", "1", "probe", "0"): 0.0, ("c1", "2", "probe", "1"): 1.0}


def test_not_probed_no_samples() -> None:
    assert samples([]) == {name: {} for name in WANTED}
