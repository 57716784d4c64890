"""Detector thresholds: typed, with defaults, overridable per cluster in the settings file::

[[clusters]]
name = "payments"
[clusters.thresholds]
stuck_reassignment_minutes = 120

Each threshold's range is declared once, in `RANGES`; a value outside it is refused naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from kafka_ops.errors import ConfigError
from kafka_ops.kafka_types import (
    DURATION_RANGE,
    INT32_MAX,
    MOST_VOLUME,
    DurationUnit,
    finite_number,
    longest,
    shortest,
    shown,
)

MOST_FACTOR = 1_000_000
"""The largest ratio threshold (`disk_skew_ratio`, `hot_*_factor`): a million times the brokers' mean or
the typical partition, far past any skew worth a warning (a large factor switches its rule off)."""
ZERO_ALLOWED = frozenset({"lag_allowed", "max_collection_issues", "max_group_collection_issues"})
COUNTS = frozenset({"lag_window", "lag_time_points", "max_collection_issues", "max_group_collection_issues",
                    "skew_spread"})  # fmt: skip
"""Thresholds the detectors use as whole numbers (truncated): at most `INT32_MAX`, a Spark int, and at
least 1 unless 0 is allowed (a `lag_window` of 0.5 would be a window of no sample)."""
DURATIONS: dict[str, DurationUnit] = {
    "history_hours": "hours", "stuck_reassignment_minutes": "minutes", "lag_seconds_warning": "seconds",
    "lag_seconds_critical": "seconds", "transaction_age_warning_s": "seconds",
    "transaction_age_critical_s": "seconds", "retention_eta_warning_s": "seconds",
    "retention_eta_critical_s": "seconds", "quorum_fetch_seconds": "seconds", "quorum_lag_seconds": "seconds",
    "migration_stall_minutes": "minutes", "migration_divergence_minutes": "minutes", "load_window_hours": "hours",
    "disk_days_warning": "days", "disk_days_critical": "days",
}  # fmt: skip
"""Thresholds that are durations, and their unit: from 1 ms to 100 years (each is subtracted from a
snapshot's time, or compared with an age)."""


@dataclass(frozen=True)
class Range:
    """The values a threshold may take: `least` to `most`, `least` itself excluded when `above`."""

    what: str
    """What the number is, as a message says it ("a share", "a number of hours")."""
    least: float
    most: float
    above: bool = False
    words: str = ""
    """The range as a message says it, when not from its numbers ("from 1 ms to 100 years")."""

    def holds(self, number: float) -> bool:
        return (number > self.least if self.above else number >= self.least) and number <= self.most

    def __str__(self) -> str:
        if self.words:
            return f"{self.what} {self.words}"
        if self.above:
            return f"{self.what} above {self.least:g} and at most {self.most:.0f}"
        return f"{self.what} from {self.least:.0f} to {self.most:.0f}"


def _duration(unit: DurationUnit) -> Range:
    most = longest(unit)
    return Range(f"a number of {unit}", shortest(unit), most, words=f"{DURATION_RANGE} ({most:.0f} {unit})")


def _count(key: str) -> Range:
    return Range("a count (a fraction is truncated)", 0 if key in ZERO_ALLOWED else 1, INT32_MAX)


RANGES: dict[str, Range] = {
    **{key: _duration(unit) for key, unit in DURATIONS.items()},
    **{key: _count(key) for key in COUNTS},
    "leader_imbalance_percent": Range("a percentage", 0, 100, above=True),
    "controller_elections_per_hour": Range("a number of elections per hour", 0, INT32_MAX, above=True),
    "lag_allowed": Range("a number of messages", 0, MOST_VOLUME),
    "disk_share_critical": Range("a share of the disk", 0, 1, above=True),
    "network_hot_share": Range("a share of the network capacity", 0, 1, above=True),
    "disk_skew_ratio": Range("a factor", 0, MOST_FACTOR, above=True),
    "hot_partition_factor": Range("a factor", 0, MOST_FACTOR, above=True),
    "hot_broker_factor": Range("a factor", 0, MOST_FACTOR, above=True),
    "disk_skew_min_bytes": Range("a number of bytes", 0, MOST_VOLUME, above=True),
    "hot_partition_min_bytes_per_s": Range("a number of bytes per second", 0, MOST_VOLUME, above=True),
    "hot_broker_min_bytes_per_s": Range("a number of bytes per second", 0, MOST_VOLUME, above=True),
}
"""Every threshold's range, declared once: the settings, the Spark jobs' `--thresholds` and the docs
(docs/health-analysis.md) say the same. Each bound is exact as a float, so that a threshold accepted once
is accepted again after its JSON round trip."""


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
    retention_eta_warning_s: float = 3600.0
    """retention_risk: a group whose first unconsumed record on a partition retention can delete within this many
    seconds (at the earliest by retention.ms, at the current rate by retention.bytes) is at risk: a warning."""
    retention_eta_critical_s: float = 900.0
    """retention_risk: ... and within this many, critical: the loss is imminent (a few collections away); a group
    that already lost records to retention is critical whatever this says."""
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
    `history_hours`); disk growth (days to full) is fitted over the whole history. retention_risk: a partition's
    produce rate is the end offset's advance over the group collections of these last hours."""
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
        """Defaults overridden by `values`; unknown keys and numbers outside their key's `RANGES` are
        refused, naming the key and its range. Every `Thresholds` round-trips through `asdict`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown threshold(s) {unknown} (known: {sorted(known)})")
        for key, value in values.items():
            allowed = RANGES[key]
            if not finite_number(value) or not allowed.holds(float(value)):
                raise ConfigError(f"{where}: threshold {key!r} must be {allowed}, got {shown(value)}")
        return replace(cls(), **{k: float(v) for k, v in values.items()})
