"""Detector thresholds: typed, with defaults, overridable per cluster in the settings file::

[[clusters]]
name = "payments"
[clusters.thresholds]
stuck_reassignment_minutes = 120
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields, replace
from typing import Any

from kafka_ops.errors import ConfigError
from kafka_ops.kafka_types import INT32_MAX, DurationUnit, finite_number, longest, shown

ZERO_ALLOWED = frozenset({"lag_allowed", "max_collection_issues", "max_group_collection_issues"})
COUNTS = frozenset({"lag_window", "lag_time_points", "max_collection_issues", "max_group_collection_issues",
                    "skew_spread"})  # fmt: skip
"""Thresholds the detectors use as whole numbers (truncated): at most `INT32_MAX`, a Spark int."""
SHARES = frozenset({"disk_share_critical"})
"""Shares of a whole: at most 1."""
DURATIONS: dict[str, DurationUnit] = {
    "history_hours": "hours", "stuck_reassignment_minutes": "minutes", "lag_seconds_warning": "seconds",
    "lag_seconds_critical": "seconds", "transaction_age_warning_s": "seconds",
    "transaction_age_critical_s": "seconds", "quorum_fetch_seconds": "seconds", "quorum_lag_seconds": "seconds",
    "migration_stall_minutes": "minutes", "migration_divergence_minutes": "minutes", "load_window_hours": "hours",
    "disk_days_warning": "days", "disk_days_critical": "days",
}  # fmt: skip
"""Thresholds that are durations, and their unit: at most 100 years (each is subtracted from a snapshot's
time, or compared with an age)."""


def most_of(key: str) -> float:
    """The largest value threshold `key` may take: 100 years for a duration (each is subtracted from a
    snapshot's time), `INT32_MAX` for a count, 1 for a share; else the largest finite number."""
    if key in DURATIONS:
        return longest(DURATIONS[key])
    if key in COUNTS:
        return INT32_MAX
    return 1.0 if key in SHARES else sys.float_info.max


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
    lag_window: float = 10.0
    """lag_status: how many of a partition's latest samples (group collections where it has a
    committed offset and a lag) Burrow's rules look at; `complete` = samples / lag_window. A
    count: a fraction is truncated."""
    lag_allowed: float = 0.0
    """lag_status: a current lag (messages) at or below this is OK whatever the window shows.
    The default, 0, is Burrow's."""
    lag_time_points: float = 60.0
    """lag_time: at most this many (end offset, time) points per partition, as Kafka Lag
    Exporter's lookup table keeps (the newest ones). A count: a fraction is truncated."""
    lag_seconds_warning: float = 300.0
    """lag_time: a partition whose consumer is more than this many seconds behind is a warning."""
    lag_seconds_critical: float = 1800.0
    """lag_time: ... and more than this many seconds behind is critical."""
    transaction_age_warning_s: float = 300.0
    """transactions: a transaction open longer than this is a warning (it holds every read_committed
    consumer of its partitions behind it)."""
    transaction_age_critical_s: float = 900.0
    """transactions: ... and longer than this is critical (Kafka's default transaction.max.timeout.ms);
    a hanging transaction (no coordinator will ever end it) is critical whatever its age."""
    max_collection_issues: float = 0.0
    """Integrity: a ZooKeeper snapshot with more collection issues (znodes that failed to read or
    parse) than this is untrusted. A count: a fraction is truncated."""
    max_group_collection_issues: float = 0.0
    """Integrity: a group collection with more issues than this is untrusted (a leaderless
    partition's unknown end offset counts: raise it on clusters that run with offline partitions)."""
    quorum_fetch_seconds: float = 30.0
    """quorum_health: a KRaft voter or observer that has not fetched from the quorum leader for longer
    than this is down or cut off (Kafka's controller.quorum.fetch.timeout.ms is 2 s: a live one fetches
    far more often)."""
    quorum_lag_seconds: float = 30.0
    """quorum_health: a voter or observer behind the leader's log end and not caught up for longer than
    this is lagging."""
    migration_stall_minutes: float = 30.0
    """migration_health: a ZooKeeper-to-KRaft migration whose controllers have waited this long for brokers
    to register, or stopped writing to ZooKeeper this long while brokers still run on it, is stalled."""
    migration_divergence_minutes: float = 10.0
    """migration_health: a partition field on which ZooKeeper and the KRaft metadata have disagreed in every
    snapshot for this long diverges (one read may catch a change half applied)."""
    skew_spread: float = 2.0
    """assignor_skew: a group whose members' partition counts differ by this much or more
    (max - min) is skewed."""

    load_window_hours: float = 1.0
    """load: partition byte rates are measured over the snapshots of this many last hours (at most
    `history_hours`); disk growth (days to full) is fitted over the whole history."""
    disk_days_warning: float = 14.0
    """load: a broker or log dir that fills up within this many days at its current growth is a warning."""
    disk_days_critical: float = 3.0
    """load: ... and within this many days, critical."""
    disk_share_critical: float = 0.95
    """load: a broker's disk or a log dir's volume fuller than this share is critical (fuller than the
    cluster's `capacity.max_disk_share`, default 0.8, is a warning)."""
    disk_skew_ratio: float = 1.5
    """load: a broker whose disk use (its used share when every broker's capacity is known, else its
    bytes) is more than this times the brokers' mean is skewed; a log dir likewise against its broker's
    other dirs."""
    disk_skew_min_bytes: float = 1e9
    """load: disk skew is judged only when the cluster (or broker, for its log dirs) holds at least this
    many bytes: on a nearly empty cluster a ratio means nothing."""
    hot_partition_factor: float = 5.0
    """load: a partition whose bytes-in is more than this times its topic's median partition (topics of 2
    partitions or more) or the cluster's median partition is hot..."""
    hot_partition_min_bytes_per_s: float = 1048576.0
    """load: ... when it takes at least this many bytes per second."""
    hot_broker_factor: float = 2.0
    """load: a broker whose bytes-in or bytes-out is more than this times the brokers' mean is hot..."""
    hot_broker_min_bytes_per_s: float = 1048576.0
    """load: ... when it is at least this many bytes per second."""
    network_hot_share: float = 0.8
    """load: a broker whose bytes-in or bytes-out reaches this share of its network capacity (when the
    cluster's `[clusters.capacity]` sets one) is hot, whatever the other brokers do."""

    @classmethod
    def from_mapping(cls, values: dict[str, Any], where: str) -> Thresholds:
        """Defaults overridden by `values`; unknown keys, non-positive numbers (`lag_allowed` and the
        issue counts may be 0) and numbers above `most_of(key)` are refused, naming the key. Every
        `Thresholds` round-trips through `asdict`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown threshold(s) {unknown} (known: {sorted(known)})")
        for key, value in values.items():
            most = most_of(key)
            if not finite_number(value) or value < 0 or (value == 0 and key not in ZERO_ALLOWED) or value > most:
                kind = "a number >= 0" if key in ZERO_ALLOWED else "a positive number"
                limit = f" of {DURATIONS[key]}" if key in DURATIONS else ""
                bound = "" if most == sys.float_info.max else f" at most {most:.0f}"
                raise ConfigError(f"{where}: threshold {key!r} must be {kind}{limit}{bound}, got {shown(value)}")
        return replace(cls(), **{k: float(v) for k, v in values.items()})
