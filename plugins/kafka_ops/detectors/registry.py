"""Every detector, by name. Adding one: a module in this package and a line here.

`DETECTORS` run on metadata snapshots (ZooKeeper or KRaft); `GROUP_DETECTORS` on group collections (their context is
the latest group collection, their inputs the group tables).
"""

from __future__ import annotations

from kafka_ops.analysis.detector import Detector
from kafka_ops.detectors import (
    assignor_skew,
    assignor_whatif,
    broker_attribution,
    controller_health,
    idle_throttles,
    isr_events,
    isr_health,
    lag_status,
    lag_time,
    leader_balance,
    migration_health,
    partition_load,
    quorum_health,
    reassignments,
    replica_placement,
    retention_risk,
    topic_deletions,
    transactions,
)

DETECTORS: dict[str, Detector] = {
    d.name: d
    for d in (
        isr_health.DETECTOR,
        isr_events.DETECTOR,
        broker_attribution.DETECTOR,
        leader_balance.DETECTOR,
        replica_placement.DETECTOR,
        controller_health.DETECTOR,
        quorum_health.DETECTOR,
        migration_health.DETECTOR,
        reassignments.DETECTOR,
        idle_throttles.DETECTOR,
        topic_deletions.DETECTOR,
        partition_load.DETECTOR,
    )
}

GROUP_DETECTORS: dict[str, Detector] = {
    d.name: d
    for d in (
        lag_status.DETECTOR,
        lag_time.DETECTOR,
        retention_risk.DETECTOR,
        assignor_skew.DETECTOR,
        assignor_whatif.DETECTOR,
        transactions.DETECTOR,
    )
}
