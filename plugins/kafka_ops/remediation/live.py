"""The live cluster as the executor sees it: fresh reads (ZooKeeper, or a KRaft cluster's Admin API),
and pure questions about them.

Every decision the executor takes (is the base still there, is a batch done, may throttles go)
is made on a fresh read, never on the plan's snapshot. `LiveReader.full()` walks the whole
chroot with the snapshot collector (preflight and the final "anything in flight anywhere?"
check need every topic); `LiveReader.topics()` reads only the brokers, the controller, the
`/admin` requests and the named topics with their partition states, which is what waiting on
a batch needs, so polling stays cheap on a cluster of 100k partitions. Both return a
`ClusterSnapshot`, so every predicate below works on either.

On a KRaft cluster `KRaftLiveReader` reads the same through the Admin API (`KRaftCollector`; its
`topics()` asks DescribeTopicPartitions for the named topics only, from the broker furthest along the
metadata log). KRaft has no `/admin` znodes: elections are synchronous requests, and a reassignment is
in flight from the moment AlterPartitionReassignments returns.

A partition is *in flight* when its topic znode lists adding or removing replicas, or when it
is named in `/admin/reassign_partitions` (written, not yet picked up by the controller). Its
in-flight target is the znode request's replicas, else the topic znode's replicas without the
removing ones (the controller writes target + original, target first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol

from kazoo.exceptions import KazooException, NoAuthError, ZookeeperError

from kafka_ops.errors import ZooKeeperAuthFailed, ZooKeeperUnreachable
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition, new_snapshot_id
from kafka_ops.planning.plan import Move
from kafka_ops.sources.admin import AdminFactory
from kafka_ops.sources.kraft.collector import KRaftCollector
from kafka_ops.sources.zookeeper import znodes
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from kafka_ops.sources.zookeeper.session import ZkReadSession

PartitionStatus = Literal["base", "target", "in_flight", "other_in_flight", "elsewhere", "missing"]


class LiveSource(Protocol):
    """Where the executor reads live state: `full()` every topic, `topics(...)` only those."""

    def full(self) -> ClusterSnapshot: ...

    def topics(self, topics: Iterable[str]) -> ClusterSnapshot: ...


class KRaftLiveReader:
    """Fresh reads of one KRaft cluster's metadata through its brokers' Admin API."""

    def __init__(self, cluster: str, admin_factory: AdminFactory) -> None:
        self.collector = KRaftCollector(cluster, admin_factory)

    def __repr__(self) -> str:
        return f"KRaftLiveReader({self.collector.cluster!r}, {self.collector.admin_factory!r})"

    def full(self) -> ClusterSnapshot:
        return self.collector.collect()

    def topics(self, topics: Iterable[str]) -> ClusterSnapshot:
        return self.collector.collect(topics)


class LiveReader:
    """Fresh reads of one cluster's metadata from ZooKeeper."""

    def __init__(self, cluster: str, target: ZooKeeperTarget) -> None:
        self.cluster = cluster
        self.target = target

    def __repr__(self) -> str:
        return f"LiveReader({self.cluster!r}, {self.target!r})"

    def full(self) -> ClusterSnapshot:
        """Every znode the snapshot collector reads."""
        return ZooKeeperCollector(self.cluster, self.target).collect()

    def topics(self, topics: Iterable[str]) -> ClusterSnapshot:
        """Brokers, controller, `/admin` requests, and only `topics` with their partition states."""
        where = self.target.connect_string
        session = self.target.session().open()
        try:
            return _read_topics(session, self.cluster, where, sorted(set(topics)))
        except NoAuthError as e:
            raise ZooKeeperAuthFailed(f"ZooKeeper at {where} denies reading Kafka's metadata") from e
        except (OSError, EOFError, KazooException, ZookeeperError) as e:
            raise ZooKeeperUnreachable(f"lost ZooKeeper at {where} while reading live state: {e!r}") from e
        finally:
            session.close()


def _read_topics(session: ZkReadSession, cluster: str, where: str, topics: list[str]) -> ClusterSnapshot:
    at = datetime.now(UTC)
    snap = ClusterSnapshot(cluster=cluster, snapshot_id=new_snapshot_id(cluster, at), captured_at=at, zookeeper=where)
    snap.zxid_start = session.last_zxid
    ids = session.children(znodes.BROKER_IDS) or []
    for path, result in session.pipelined([f"{znodes.BROKER_IDS}/{i}" for i in ids], "get", str):
        if result is not None:
            broker = znodes.parse_broker(path, result[0], znodes.stat_of(result[1]))
            snap.brokers[broker.broker_id] = broker
    singles = [
        znodes.CONTROLLER,
        znodes.CONTROLLER_EPOCH,
        znodes.REASSIGN_PARTITIONS,
        znodes.PREFERRED_REPLICA_ELECTION,
    ]
    for path, result in session.pipelined(singles, "get", str):
        if result is None:
            continue
        data, stat = result[0], znodes.stat_of(result[1])
        if path == znodes.CONTROLLER:
            snap.controller = znodes.parse_controller(path, data, stat)
        elif path == znodes.CONTROLLER_EPOCH:
            snap.controller_epoch = znodes.parse_controller_epoch(path, data)
            snap.controller_epoch_stat = stat
        elif path == znodes.REASSIGN_PARTITIONS:
            snap.reassignment_requests = znodes.parse_reassign_partitions(path, data)
        else:
            snap.preferred_election_requests = znodes.parse_preferred_election(path, data)
    for path, result in session.pipelined([znodes.topic_path(t) for t in topics], "get", str):
        if result is not None:
            assignment = znodes.parse_topic(path, result[0])
            snap.topics[assignment.topic] = assignment
    states = [(t, p) for t in sorted(snap.topics) for p in sorted(snap.topics[t].partitions)]
    for (topic, partition), result in session.pipelined(states, "get", lambda tp: znodes.state_path(*tp)):
        if result is not None:
            path = znodes.state_path(topic, partition)
            state = znodes.parse_partition_state(path, result[0], znodes.stat_of(result[1]), topic, partition)
            snap.partition_states[(topic, partition)] = state
    snap.zxid_end = session.last_zxid
    snap.completed_at = datetime.now(UTC)
    return snap


# -- pure questions about a live snapshot -----------------------------------------------------------


def in_flight(snap: ClusterSnapshot) -> dict[TopicPartition, tuple[int, ...]]:
    """Every partition being reassigned, with the replicas it is moving to (module docstring)."""
    out: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in sorted(snap.topics):
        t = snap.topics[topic]
        for p in sorted(set(t.adding_replicas) | set(t.removing_replicas)):
            if t.adding_replicas.get(p) or t.removing_replicas.get(p):
                removing = set(t.removing_replicas.get(p, ()))
                out[(topic, p)] = tuple(b for b in t.partitions.get(p, ()) if b not in removing)
    for request in snap.reassignment_requests:
        out[(request.topic, request.partition)] = request.replicas
    return out


def moving_as_planned(moves: Iterable[Move], moving: Mapping[TopicPartition, tuple[int, ...]]) -> list[TopicPartition]:
    """The planned moves now in flight towards their planned replicas (`moving`: `in_flight`)."""
    return sorted((m.topic, m.partition) for m in moves if moving.get((m.topic, m.partition)) == m.target)


def assigned(snap: ClusterSnapshot, tp: TopicPartition) -> tuple[int, ...] | None:
    """The topic znode's replica list, or None when the partition does not exist."""
    topic = snap.topics.get(tp[0])
    if topic is None or tp[1] not in topic.partitions:
        return None
    return topic.partitions[tp[1]]


def classify(move: Move, snap: ClusterSnapshot, moving: dict[TopicPartition, tuple[int, ...]]) -> PartitionStatus:
    """Where a planned partition stands: at its plan's base, at its target, on its way there, on
    its way elsewhere, somewhere else, or gone. `moving` is `in_flight(snap)`."""
    tp = (move.topic, move.partition)
    replicas = assigned(snap, tp)
    if replicas is None:
        return "missing"
    if tp in moving:
        return "in_flight" if moving[tp] == move.target else "other_in_flight"
    if replicas == move.target:
        return "target"
    if replicas == move.current:
        return "base"
    return "elsewhere"


@dataclass(frozen=True)
class BatchProgress:
    """How far a batch's partitions are. `complete`: every partition is at its target, nothing of it
    is in flight, and every target replica is in the ISR. `waiting` says, per unfinished partition,
    what is missing; `signature` changes whenever any of them moves (ISR, adding/removing replicas),
    so an unchanged signature over time means no progress."""

    complete: bool
    waiting: tuple[str, ...]
    signature: tuple[object, ...]


def batch_progress(moves: Sequence[Move], snap: ClusterSnapshot) -> BatchProgress:
    moving = in_flight(snap)
    waiting: list[str] = []
    signature: list[object] = []
    for m in moves:
        tp = (m.topic, m.partition)
        replicas = assigned(snap, tp)
        state = snap.partition_states.get(tp)
        isr = state.isr if state is not None else ()
        signature.append((tp, replicas, tuple(sorted(isr)), tp in moving))
        if replicas is None:
            waiting.append(f"{m.topic}-{m.partition}: the partition no longer exists")
            continue
        missing = [b for b in m.target if b not in isr]
        dead = [b for b in missing if b not in snap.brokers]
        if tp in moving or replicas != m.target or missing:
            note = f"{m.topic}-{m.partition}: replicas {list(replicas)}, target {list(m.target)}, ISR {list(isr)}"
            if dead:
                note += f"; target replica(s) {dead} on broker(s) that are not registered"
            waiting.append(note)
    return BatchProgress(not waiting, tuple(waiting), tuple(signature))


def controller_changed_at_ms(snap: ClusterSnapshot) -> int | None:
    """When the controller last changed: the later of `/controller`'s creation (an ephemeral znode
    created by each election) and `/controller_epoch`'s last write (+1 per election)."""
    times = []
    if snap.controller is not None and snap.controller.stat is not None:
        times.append(snap.controller.stat.ctime_ms)
    if snap.controller_epoch_stat is not None:
        times.append(snap.controller_epoch_stat.mtime_ms)
    return max(times) if times else None
