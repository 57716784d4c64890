"""Every detector, by name. Adding one: a module in this package and a line here."""

from __future__ import annotations

from kafka_ops.analysis.detector import Detector
from kafka_ops.detectors import (
    broker_attribution,
    controller_health,
    isr_events,
    isr_health,
    leader_balance,
    reassignments,
    replica_placement,
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
        reassignments.DETECTOR,
    )
}
