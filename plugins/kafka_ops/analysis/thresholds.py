"""Detector thresholds: typed, with defaults, overridable per cluster in the settings file::

[[clusters]]
name = "payments"
[clusters.thresholds]
stuck_reassignment_minutes = 120
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from kafka_ops.errors import ConfigError


@dataclass(frozen=True)
class Thresholds:
    history_hours: float = 24.0
    """How much snapshot history the detectors read."""
    stuck_reassignment_minutes: float = 60.0
    """A reassignment older than this (first seen in flight), or whose new replicas make no ISR
    progress across snapshots for this long, is stuck."""
    leader_imbalance_percent: float = 10.0
    """Kafka's `leader.imbalance.per.broker.percentage` (ZooKeeper-mode controller rule)."""
    controller_elections_per_hour: float = 2.0
    """More controller elections than this in the last hour is churn."""

    @classmethod
    def from_mapping(cls, values: dict[str, Any], where: str) -> Thresholds:
        """Defaults overridden by `values`; unknown keys and non-positive numbers are refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown threshold(s) {unknown} (known: {sorted(known)})")
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"{where}: threshold {key!r} must be a positive number, got {value!r}")
        return replace(cls(), **{k: float(v) for k, v in values.items()})
