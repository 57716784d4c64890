from __future__ import annotations

from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.schema import TABLES


def test_findings_tables_never_shadow_lake_tables() -> None:
    outputs = [o for d in DETECTORS.values() for o in d.outputs]
    assert len(outputs) == len(set(outputs)), "two detectors write the same findings table"
    assert not set(outputs) & set(TABLES), "a findings table has a snapshot table's name"


def test_detectors_read_only_lake_tables() -> None:
    for detector in DETECTORS.values():
        assert set(detector.tables) <= set(TABLES), detector.name
