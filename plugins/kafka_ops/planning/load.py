"""The load model of the load-aware planners: bytes per partition and capacities per broker.

Per partition: its size is the largest of its replicas' sizes in the snapshot's `replica_sizes`
(DescribeLogDirs; a future replica, still being copied between log dirs, counts only when the
partition has no other), else unknown; its byte rates come from the caller (`PartitionRates`, the
Spark job's estimate from the lake's history), zero when absent. A new replica copies the
partition's largest replica, so its size is what a move costs and what the receiver's disk gains.
DescribeLogDirs counts local segments only: a partition of a topic with tiered storage (KIP-405) weighs
its local part, which is all a new replica fetches (its remote part stays in remote storage).

Per broker: capacities are the cluster's `[clusters.capacity]` settings (`Capacities.of`); a disk
capacity nobody set defaults to the sum of the broker's log dirs' `total_bytes` when every log dir
of the broker reports one without error. Used disk, inbound and leader bytes-in are summed from the
partitions' sizes and rates over the replicas a broker holds (inbound: every replica takes the
partition's bytes in, the leader from producers, a follower by replication), so before and after
figures are computed alike.

`ClusterLoad.missing` names the goals a plan cannot use for lack of data; the planners report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_ops.capacities import Capacities
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition

DISK_SPREAD = "disk_spread"
NETWORK_IN_SPREAD = "network_in_spread"
LEADER_BYTES_IN_SPREAD = "leader_bytes_in_spread"
REPLICA_SPREAD = "replica_count_spread"
LEADER_SPREAD = "leader_count_spread"
SOFT_GOALS = (DISK_SPREAD, NETWORK_IN_SPREAD, LEADER_BYTES_IN_SPREAD, REPLICA_SPREAD, LEADER_SPREAD)
"""The soft goals, in priority order."""
RACK_AWARE = "rack_awareness"
DISK_CAPACITY = "disk_capacity"
REPLICA_CAPACITY = "replica_capacity"
NETWORK_IN_CAPACITY = "network_in_capacity"
NO_NEW_ON_CORDONED = "cordoned_or_fenced_get_nothing"
HARD_GOALS = (RACK_AWARE, DISK_CAPACITY, NETWORK_IN_CAPACITY, REPLICA_CAPACITY, NO_NEW_ON_CORDONED)


@dataclass(frozen=True, slots=True)
class PartitionRates:
    """A partition's byte rates (bytes per second): into its leader, and read from it."""

    bytes_in_per_s: float = 0.0
    bytes_out_per_s: float = 0.0


PartitionRateMap = Mapping[TopicPartition, PartitionRates]


@dataclass(frozen=True)
class ClusterLoad:
    """Sizes, rates and capacities of one snapshot's cluster (see the module docstring)."""

    sizes: dict[TopicPartition, int]
    """Partition size in bytes, for the partitions whose size is known."""
    rates: Mapping[TopicPartition, PartitionRates]
    disk_capacity: dict[int, int | None]
    """Per broker (every registered one): usable disk bytes, None when unknown."""
    network_in_capacity: dict[int, float | None]
    max_disk_share: float = 0.8
    max_replicas_per_broker: int | None = None
    missing: dict[str, str] = field(default_factory=dict)
    """Goal → why the planner could not use it (no sizes, no rates, no capacities)."""

    @property
    def has_sizes(self) -> bool:
        return bool(self.sizes)

    @property
    def has_rates(self) -> bool:
        return any(r.bytes_in_per_s for r in self.rates.values())

    def size(self, tp: TopicPartition) -> int:
        return self.sizes.get(tp, 0)

    def bytes_in(self, tp: TopicPartition) -> float:
        rates = self.rates.get(tp)
        return 0.0 if rates is None else rates.bytes_in_per_s

    def disk_limit(self, broker_id: int) -> float | None:
        """The most bytes broker `broker_id` may hold under the disk hard goal; None: unknown."""
        cap = self.disk_capacity.get(broker_id)
        return None if cap is None else cap * self.max_disk_share


def partition_sizes(snapshot: ClusterSnapshot) -> dict[TopicPartition, int]:
    """Each partition's largest replica size (a future replica only when it has no other)."""
    current: dict[TopicPartition, int] = {}
    future: dict[TopicPartition, int] = {}
    for r in snapshot.replica_sizes:
        into = future if r.is_future else current
        tp = (r.topic, r.partition)
        if r.size_bytes > into.get(tp, -1):
            into[tp] = r.size_bytes
    return {**{tp: s for tp, s in future.items() if tp not in current}, **current}


def log_dir_capacity(snapshot: ClusterSnapshot) -> dict[int, int]:
    """Per broker, the sum of its log dirs' total bytes, where every one of them reports it."""
    totals: dict[int, int] = {}
    incomplete: set[int] = set()
    for d in snapshot.log_dirs:
        if d.error is not None or d.total_bytes is None:
            incomplete.add(d.broker_id)
        else:
            totals[d.broker_id] = totals.get(d.broker_id, 0) + d.total_bytes
    return {b: total for b, total in totals.items() if b not in incomplete}


def cluster_load(
    snapshot: ClusterSnapshot, capacities: Capacities | None = None, rates: PartitionRateMap | None = None
) -> ClusterLoad:
    """The load model of `snapshot` with the cluster's `capacities` and the optional `rates`."""
    caps = capacities or Capacities()
    from_dirs = log_dir_capacity(snapshot)
    brokers = sorted(set(snapshot.brokers) | {d.broker_id for d in snapshot.log_dirs})
    disk: dict[int, int | None] = {}
    net_in: dict[int, float | None] = {}
    for b in brokers:
        own = caps.of(b)
        disk[b] = own.disk_bytes if own.disk_bytes is not None else from_dirs.get(b)
        net_in[b] = own.network_in_bytes_per_s
    sizes = partition_sizes(snapshot)
    load = ClusterLoad(sizes, dict(rates or {}), disk, net_in, caps.max_disk_share, caps.max_replicas_per_broker)
    load.missing.update(_missing(load, snapshot.brokers))
    return load


def _missing(load: ClusterLoad, registered: Iterable[int]) -> dict[str, str]:
    out: dict[str, str] = {}
    if not load.has_sizes:
        out[DISK_SPREAD] = "no replica sizes in the snapshot (DescribeLogDirs not collected)"
    no_disk = sorted(b for b in registered if load.disk_capacity.get(b) is None)
    if no_disk:
        out[DISK_CAPACITY] = (
            f"no disk capacity for broker(s) {no_disk} (set [clusters.capacity] disk_bytes, or collect log dir "
            "totals): their disk share is not checked and disk is spread in bytes, not in shares"
        )
    if not load.has_rates:
        why = "no partition byte rates given (the lake's byte-rate job has not run for this cluster)"
        out[NETWORK_IN_SPREAD] = why
        out[LEADER_BYTES_IN_SPREAD] = why
    no_net = sorted(b for b in registered if load.network_in_capacity.get(b) is None)
    if no_net and load.has_rates:
        out[NETWORK_IN_CAPACITY] = f"no network_in_bytes_per_s for broker(s) {no_net}: inbound is spread in bytes/s"
    return out
