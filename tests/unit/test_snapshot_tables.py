from __future__ import annotations

from kafka_ops.lake.schema import METADATA_TABLES, SNAPSHOT_TABLES
from kafka_ops.snapshot.tables import HIDDEN, render_summary, snapshot_batch, summary
from tests.unit.snapshots import small_snapshot


def test_every_table_matches_its_documented_schema() -> None:
    batch = snapshot_batch(small_snapshot())
    assert set(batch.tables) == set(METADATA_TABLES)  # group tables are their own batch
    for name, table in batch.tables.items():
        assert table.schema.equals(SNAPSHOT_TABLES[name]), name
        assert set(table.column("snapshot_id").to_pylist()) <= {"s1"}


def test_partitions_rows() -> None:
    rows = snapshot_batch(small_snapshot()).tables["partitions"].to_pylist()
    assert [(r["topic"], r["partition"]) for r in rows] == [
        ("orders", 0),
        ("orders", 1),
        ("orders", 2),
        ("solo", 0),
    ]
    first = rows[0]
    assert first["replicas"] == [1, 2, 3] and first["isr"] == [1, 2]
    assert first["state_version"] == 2 and first["has_state"] is True
    assert rows[2]["adding_replicas"] == [3]


def test_reassignments_merge_topic_znode_and_request() -> None:
    rows = snapshot_batch(small_snapshot()).tables["reassignments"].to_pylist()
    assert len(rows) == 1
    row = rows[0]
    assert (row["topic"], row["partition"]) == ("orders", 2)
    assert row["adding_replicas"] == [3]
    assert row["target_replicas"] == [1, 2, 3]
    assert row["requested_in_znode"] is True


def test_reassignment_submitted_through_the_admin_api_is_in_the_topic_znode_only() -> None:
    """An Admin API reassignment writes no /admin/reassign_partitions: the row comes from the topic znode."""
    snap = small_snapshot()
    snap.reassignment_requests = []
    snap.topics["orders"].removing_replicas[0] = (3,)
    rows = {(r["topic"], r["partition"]): r for r in snapshot_batch(snap).tables["reassignments"].to_pylist()}
    assert set(rows) == {("orders", 0), ("orders", 2)}
    assert rows[("orders", 0)]["target_replicas"] == [1, 2]
    assert rows[("orders", 0)]["removing_replicas"] == [3]
    assert rows[("orders", 2)]["target_replicas"] == [1, 2, 3]
    assert not any(r["requested_in_znode"] for r in rows.values())


def test_secret_config_values_never_reach_the_lake() -> None:
    rows = snapshot_batch(small_snapshot()).tables["configs"].to_pylist()
    values = {r["config_key"]: r["config_value"] for r in rows}
    assert values["ssl.keystore.password"] == HIDDEN
    assert values["listener.name.sasl.plain.sasl.jaas.config"] == HIDDEN
    assert values["log.retention.ms"] == "1"
    assert values["min.insync.replicas"] == "2"


def test_controller_row_when_there_is_no_controller() -> None:
    snap = small_snapshot()
    snap.controller = None
    (row,) = snapshot_batch(snap).tables["controller"].to_pylist()
    assert row["controller_id"] is None
    assert row["controller_epoch"] == 4


def test_admin_requests() -> None:
    rows = snapshot_batch(small_snapshot()).tables["admin_requests"].to_pylist()
    assert [(r["request"], r["topic"], r["partition"]) for r in rows] == [
        ("preferred_replica_election", "orders", 1),
        ("delete_topic", "old", None),
    ]


def test_summary_figures_and_text() -> None:
    info = summary(small_snapshot())
    assert info["brokers"] == [1, 2]
    assert info["partitions"] == 4
    assert info["under_replicated"] == 1
    assert info["offline"] == 1
    assert info["controller"] == 1 and info["controller_epoch"] == 4
    assert info["reassignments_in_flight"] == 1
    text = render_summary(info)
    assert "under-replicated 1" in text and "controller     broker 1  epoch 4" in text
