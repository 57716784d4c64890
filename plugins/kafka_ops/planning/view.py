"""A read-only view of a snapshot shaped for planning, and the reasons a partition is left alone.

Rules every planner shares (a skipped partition is reported with the first reason that applies):

* a topic marked for deletion (`/admin/delete_topics/<t>`) is never touched;
* a partition being reassigned (`adding_replicas` / `removing_replicas` non-empty, or named in
  `/admin/reassign_partitions`) is never touched: the controller would ignore or fight a second
  reassignment, and its assignment is not final;
* a partition without a state znode has no known leader or ISR;
* an offline partition (no leader, or a leader that is not registered) has no replica to copy
  from or to elect.

"Live" means registered in `/brokers/ids` (the znode is ephemeral: a registered broker has a
session with ZooKeeper; on KRaft, registered and unfenced). Only live brokers are ever chosen as
targets, and never a cordoned one: a broker the operator lists in the cluster's `cordoned_brokers`
setting, or one Kafka itself cordons (KIP-1066 `cordoned.log.dirs`, `Broker.cordoned`). A cordoned
broker keeps the replicas it has (a cordon is not a decommission): only decommissioning it, or
draining it in a replica balance, moves them off.

The reason texts for reassignment and the preferred replica match the `leader_balance`
detector's `blocked_reason` values, so a finding and a plan explain a partition the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any

from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.model.leadership import REASSIGNING
from kafka_ops.planning.placement import rack_alternated, rack_key

TOPIC_DELETING = "topic is being deleted"
NO_STATE = "partition has no state znode (no known leader or ISR)"
OFFLINE = "partition is offline (no live leader)"
ELECTION_REQUESTED = "a preferred-leader election is already requested"
ALREADY_AT_RF = "already at the requested replication factor"
DEAD_REPLICA = "a replica is on a broker that is not registered (decommission it first)"
CAP_RUN = "cap reached: max_elections"
CAP_BROKER = "cap reached: max_per_broker"
CAP_CHANGES = "cap reached: max_partitions"
NO_TARGET = "no live broker can take the replica without breaking the rack spread"
NO_LEADER_TARGET = "no other replica is live, in the ISR and below its leader target"

NO_LEADER = -1
CORDONED = "cordoned_brokers"
"""The field a refusal names when cordons leave no broker to place on (setting and request key)."""
KAFKA_CORDONED = "kafka_cordoned_brokers"
"""The request key listing the brokers Kafka cordons (`cordoned.log.dirs`)."""
CORDON_FIRST = "cordon_first"
"""A decommission's request key: the brokers its execution cordons before it moves a replica."""
UNCORDON_FIRST = "uncordon_first"
"""A rollback's request key: the brokers its source plan cordoned, uncordoned before it moves back."""
CORDON_LEVEL = 30
"""metadata.version 4.3-IV0, the first level whose brokers take `cordoned.log.dirs` (KIP-1066;
Kafka's `MetadataVersion.isCordonedLogDirsSupported`)."""


class ClusterView:
    """Assignment, liveness and racks of one snapshot, computed once.

    `assignment` holds every partition's replicas without those a reassignment is still adding
    (`ClusterSnapshot.replicas`), in replica order; partitions are iterated in (topic, partition)
    order everywhere so that plans are deterministic whatever order the collector used.

    `cordoned_brokers` are the operator's cordons (the cluster's setting, already checked);
    `cordoned` maps every cordoned broker, the operator's and Kafka's, to why, and `placeable`
    holds the live brokers that may receive a new replica.
    """

    def __init__(self, snapshot: ClusterSnapshot, cordoned_brokers: Collection[int] = ()) -> None:
        self.snapshot = snapshot
        self.live: frozenset[int] = frozenset(snapshot.brokers)
        self.operator_cordoned = frozenset(cordoned_brokers)
        self.kafka_cordoned = frozenset(b for b, broker in snapshot.brokers.items() if broker.cordoned)
        self.cordoned: dict[int, str] = {}
        for b in sorted(self.operator_cordoned | self.kafka_cordoned):
            why = [f"setting {CORDONED}"] if b in self.operator_cordoned else []
            self.cordoned[b] = " and ".join([*why, "Kafka's cordoned.log.dirs"] if b in self.kafka_cordoned else why)
        self.placeable: frozenset[int] = self.live - self.cordoned.keys()
        self.racks: dict[int, str | None] = {b: snapshot.brokers[b].rack for b in sorted(snapshot.brokers)}
        self.rack_of: dict[int, str] = {b: rack_key(b, r) for b, r in self.racks.items()}
        self.order: list[int] = rack_alternated(self.racks)
        self.racks_available = len(set(self.rack_of.values()))
        self.assignment: dict[TopicPartition, tuple[int, ...]] = {}
        reassigning: set[TopicPartition] = {(r.topic, r.partition) for r in snapshot.reassignment_requests}
        for topic in sorted(snapshot.topics):
            t = snapshot.topics[topic]
            for partition in sorted(t.partitions):
                self.assignment[(topic, partition)] = snapshot.replicas(topic, partition)
                if t.adding_replicas.get(partition) or t.removing_replicas.get(partition):
                    reassigning.add((topic, partition))
        self.reassigning = frozenset(reassigning)
        self.deleting = frozenset(snapshot.pending_topic_deletions)
        self.leaders: dict[TopicPartition, int] = {tp: s.leader for tp, s in snapshot.partition_states.items()}

    @property
    def cluster(self) -> str:
        return self.snapshot.cluster

    @property
    def snapshot_id(self) -> str:
        return self.snapshot.snapshot_id

    def cordon_request(self) -> dict[str, Any]:
        """What a plan's request records about cordons: nothing when no broker is cordoned."""
        out: dict[str, Any] = {}
        if self.operator_cordoned:
            out[CORDONED] = sorted(self.operator_cordoned)
        if self.kafka_cordoned:
            out[KAFKA_CORDONED] = sorted(self.kafka_cordoned)
        return out

    def cordon_first(self, leaving: Collection[int]) -> dict[str, Any]:
        """What a decommission's request records about cordoning first: on a cluster whose
        metadata.version takes `cordoned.log.dirs`, the leaving brokers that are registered and not
        cordoned yet (a cordon already there is the operator's, and no cancel lifts it)."""
        level = self.snapshot.metadata_version
        first = sorted(b for b in leaving if b in self.live and b not in self.kafka_cordoned)
        return {CORDON_FIRST: first} if level is not None and level >= CORDON_LEVEL and first else {}

    def cordons_shown(self, brokers: Collection[int] | None = None) -> str:
        """The cordoned brokers (of `brokers`, else all) and why, for a refusal's message."""
        shown = [f"{b} ({why})" for b, why in self.cordoned.items() if brokers is None or b in brokers]
        return ", ".join(shown) or "none"

    def partitions_of(self, topic: str) -> list[TopicPartition]:
        return [(topic, p) for p in sorted(self.snapshot.topics[topic].partitions)]

    def leader(self, tp: TopicPartition) -> int:
        """The current leader; -1 when there is none or no state znode."""
        return self.leaders.get(tp, NO_LEADER)

    def isr(self, tp: TopicPartition) -> tuple[int, ...]:
        state = self.snapshot.partition_states.get(tp)
        return () if state is None else state.isr

    def blocking_reason(self, tp: TopicPartition) -> str | None:
        """Why no planner may touch this partition now, or None (see the module docstring)."""
        if tp[0] in self.deleting:
            return TOPIC_DELETING
        if tp in self.reassigning:
            return REASSIGNING
        state = self.snapshot.partition_states.get(tp)
        if state is None:
            return NO_STATE
        if state.leader == NO_LEADER or state.leader not in self.live:
            return OFFLINE
        return None

    def replica_counts(self) -> Counter[int]:
        """Replicas per broker over every partition (dead brokers included)."""
        return Counter(b for replicas in self.assignment.values() for b in replicas)

    def preferred_counts(self) -> Counter[int]:
        """Partitions per preferred leader (first replica)."""
        return Counter(replicas[0] for replicas in self.assignment.values() if replicas)

    def leader_counts(self) -> Counter[int]:
        """Partitions each broker leads now (from the state znodes)."""
        return Counter(b for tp, b in self.leaders.items() if b != NO_LEADER and tp in self.assignment)
