"""Every detector, by name. Adding one: a module in this package and a line here."""

from __future__ import annotations

from kafka_ops.analysis.detector import Detector
from kafka_ops.detectors import isr_health

DETECTORS: dict[str, Detector] = {d.name: d for d in (isr_health.DETECTOR,)}
