from __future__ import annotations

from kafka_ops.detectors.registry import DETECTORS, GROUP_DETECTORS
from kafka_ops.lake.schema import COMMIT_TABLE, GROUP_COMMIT_TABLE, GROUP_TABLES, TABLES

ALL = [*DETECTORS.values(), *GROUP_DETECTORS.values()]


def test_findings_tables_never_shadow_lake_tables() -> None:
    outputs = [o for d in ALL for o in d.outputs]
    assert len(outputs) == len(set(outputs)), "two detectors write the same findings table"
    assert not set(outputs) & set(TABLES), "a findings table has a snapshot table's name"


def test_detector_names_are_unique() -> None:
    assert not set(DETECTORS) & set(GROUP_DETECTORS)
    for name, detector in {**DETECTORS, **GROUP_DETECTORS}.items():
        assert detector.name == name


def test_detectors_read_only_lake_tables() -> None:
    for detector in DETECTORS.values():
        assert set(detector.tables) <= set(TABLES), detector.name


def test_group_detectors_read_only_group_tables() -> None:
    # their context is the latest group collection: ZooKeeper snapshots would not line up with it,
    # except as the partition layout (replicas, racks) the assignor what-if assigns from, the
    # client quotas lag_status reads from the latest snapshot at or before the collection, and the
    # topic configs, leaders and replica sizes retention_risk reads from that snapshot likewise
    borrowed = {
        "assignor_whatif": {"brokers", "partitions"},
        "lag_status": {"quotas", "snapshots"},
        "retention_risk": {"snapshots", "configs", "partitions", "replica_sizes"},
    }
    for detector in GROUP_DETECTORS.values():
        allowed = set(GROUP_TABLES) | borrowed.get(detector.name, set())
        assert set(detector.tables) <= allowed, detector.name
        assert detector.source == GROUP_COMMIT_TABLE, detector.name


def test_snapshot_detectors_run_on_zookeeper_snapshots() -> None:
    for detector in DETECTORS.values():
        assert detector.source == COMMIT_TABLE, detector.name
