"""The health report's tiered-storage table: each remote-storage partition's local and remote-only offsets and
its copy backlog, worst first, unknowns shown as unknown; no table when no topic has remote storage."""

from __future__ import annotations

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TieredLog, TieredTopic
from kafka_ops.report.data import gather
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import AT, small_snapshot

TITLE = "Tiered storage: partitions by copy backlog (offsets in the local log not yet in remote storage)"


def test_remote_storage_partitions_worst_backlog_first(lake: Lake) -> None:
    snap = small_snapshot("s1")
    snap.remote_storage = {"orders": True}
    snap.tiered_topics = {"orders": TieredTopic("orders", local_retention_ms=-2, local_retention_bytes=1_048_576)}
    snap.tiered_logs = {
        ("orders", 0): TieredLog("orders", 0, 1, 0, 3073, 4096, 5000),
        ("orders", 1): TieredLog("orders", 1, 2, 0, None, -1, 40),  # earliest-local unsupported, nothing tiered
    }
    lake.publish(snapshot_batch(snap))

    (table,) = [t for t in gather(lake, "c1", now=AT).offenders if t.title == TITLE]
    assert table.total == 3  # orders-2: no answer at all
    assert table.rows == (
        ("orders-0", 1, 1927, 3073, 4096, 903, "= retention", 1_048_576),
        ("orders-1", 2, None, None, "nothing yet", None, "= retention", 1_048_576),
        ("orders-2", 1, None, None, None, None, "= retention", 1_048_576),
    )


def test_no_table_without_remote_storage(lake: Lake) -> None:
    lake.publish(snapshot_batch(small_snapshot("s1")))
    assert not [t for t in gather(lake, "c1", now=AT).offenders if t.title == TITLE]
