"""`kafka_ops_tiered_copy_backlog_offsets`, `_local_offsets`, `_remote_offsets` and `_local_bytes` per
partition of a topic with remote storage, from the latest metadata snapshot's `partitions` and `replica_sizes`
as the lake cache holds them; nothing for other topics, no sample for a figure the snapshot does not know."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pyarrow as pa

from kafka_ops.lake.schema import METADATA_TABLES
from kafka_ops.web.figures import cluster_figures
from kafka_ops.web.lake_cache import Batch, ClusterView
from kafka_ops.web.profiles import own_metrics
from tests.unit.snapshots import AT

WANTED = ("kafka_ops_tiered_copy_backlog_offsets", "kafka_ops_tiered_local_offsets", "kafka_ops_tiered_remote_offsets",
          "kafka_ops_tiered_local_bytes")  # fmt: skip
TIERED = {"remote_storage": True, "local_retention_ms": -2, "local_retention_bytes": 1048576}


def table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist([{"snapshot_id": "s1", "captured_at": AT, **r} for r in rows],
                                schema=METADATA_TABLES[name])  # fmt: skip


def samples(partitions: list[dict[str, Any]], sizes: list[dict[str, Any]]) -> dict[str, dict[tuple[str, ...], float]]:
    tables = {"partitions": table("partitions", partitions), "replica_sizes": table("replica_sizes", sizes)}
    view = ClusterView("c1", metadata=Batch({"snapshot_id": "s1", "captured_at": AT}, tables))
    families = own_metrics([cluster_figures(view, AT, timedelta(minutes=5))])
    return {f.name: {tuple(s.labels.values()): s.value for s in f.samples} for f in families if f.name in WANTED}


def test_a_tiered_partitions_local_and_remote_parts_and_backlog() -> None:
    found = samples(
        [
            {"topic": "orders", "partition": 0, "leader": 1, **TIERED, "log_start_offset": 0,
             "local_log_start_offset": 3072, "tiered_end_offset": 4095, "end_offset": 5000, "copy_backlog": 904},
            # nothing tiered yet
            {"topic": "orders", "partition": 1, "leader": 2, **TIERED, "log_start_offset": 0,
             "local_log_start_offset": 0, "tiered_end_offset": -1, "end_offset": 40, "copy_backlog": 40},
            # a broker that does not serve latest-tiered: no backlog, no remote figure
            {"topic": "orders", "partition": 2, "leader": 1, **TIERED, "log_start_offset": 0,
             "local_log_start_offset": 10, "end_offset": 50},
            {"topic": "plain", "partition": 0, "leader": 1, "remote_storage": False},  # not applicable
            {"topic": "unknown", "partition": 0, "leader": 1},  # its configs unknown
        ],
        [
            {"topic": "orders", "partition": 0, "broker_id": 1, "log_dir": "/d", "size_bytes": 1936011},
            {"topic": "orders", "partition": 0, "broker_id": 2, "log_dir": "/d", "size_bytes": 7},  # a follower
            {"topic": "plain", "partition": 0, "broker_id": 1, "log_dir": "/d", "size_bytes": 99},
        ],
    )  # fmt: skip
    assert found["kafka_ops_tiered_copy_backlog_offsets"] == {("c1", "orders", "0"): 904, ("c1", "orders", "1"): 40}
    assert found["kafka_ops_tiered_local_offsets"] == {
        ("c1", "orders", "0"): 1928, ("c1", "orders", "1"): 40, ("c1", "orders", "2"): 40,
    }  # fmt: skip
    assert found["kafka_ops_tiered_remote_offsets"] == {("c1", "orders", "0"): 4096, ("c1", "orders", "1"): 0}
    assert found["kafka_ops_tiered_local_bytes"] == {("c1", "orders", "0"): 1936011}


def test_no_remote_storage_topic_no_samples() -> None:
    found = samples([{"topic": "plain", "partition": 0, "leader": 1, "remote_storage": False}], [])
    assert found == {name: {} for name in WANTED}
