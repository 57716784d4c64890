"""What a planner returns: a typed, self-describing plan and its Kafka-format files.

A `Plan` is data only. It records the snapshot it was computed from (`snapshot_id`, so the
executor can refuse to apply it to a cluster that drifted), the request, every partition it
reassigns with the partition's exact current replicas (its rollback plan), the preferred-leader
elections it asks for, what it skipped and why, per-broker counts before and after, and
planner-specific figures (e.g. the lower bound on moves).

Counting: one *move* is one replica added to a broker (a partition going from [1,2,3] to
[1,2,4] is one move); removing a replica, or reordering a list, moves no data. Estimated bytes
are moves × partition size where a size is known (sizes come from the caller, e.g.
`DescribeLogDirs`; the snapshot has none).

Files, byte-compatible with Kafka's own tools:
* `to_reassignment_json()`: `kafka-reassign-partitions --execute --reassignment-json-file`,
  `{"version":1,"partitions":[{"topic","partition","replicas"[,"log_dirs"]}]}`; also the
  `/admin/reassign_partitions` znode format;
* `rollback_json()`: the same format holding the current assignment of every touched partition;
* `election_json()`: `kafka-leader-election --path-to-json-file` and the
  `/admin/preferred_replica_election` znode, `{"version":1,"partitions":[{"topic","partition"}]}`;
* `throttles()`: the topic-level throttled-replica lists and the brokers whose rate to cap,
  computed as `kafka-reassign-partitions --execute --throttle` does (`calculateProposedMoveMap`).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.load import ClusterLoad
from kafka_ops.planning.view import NO_LEADER, UNCORDON_FIRST, ClusterView

LEADER_THROTTLED = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED = "follower.replication.throttled.replicas"
PlanKind = Literal[
    "preferred_election",
    "replication_factor",
    "decommission",
    "replica_balance",
    "leader_reorder",
    "log_dir_balance",
    "rollback",
    "finish",
    "unregister_broker",
]
PartitionSizes = Mapping[TopicPartition, int]


@dataclass(frozen=True, slots=True)
class Move:
    """One partition's reassignment: `current` (exact, the rollback) → `target` replicas."""

    topic: str
    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]
    size_bytes: int | None = None

    @property
    def added(self) -> tuple[int, ...]:
        """Brokers that receive a new replica (in target order): each is one move."""
        return tuple(b for b in self.target if b not in self.current)

    @property
    def removed(self) -> tuple[int, ...]:
        return tuple(b for b in self.current if b not in self.target)

    @property
    def moves(self) -> int:
        return len(self.added)

    @property
    def estimated_bytes(self) -> int | None:
        return None if self.size_bytes is None else self.size_bytes * self.moves


@dataclass(frozen=True, slots=True)
class DirMove:
    """One replica moved between two log dirs of its broker (AlterReplicaLogDirs): no broker changes,
    the broker copies it into a future replica in `target_dir`, then swaps it in."""

    topic: str
    partition: int
    broker: int
    source_dir: str
    target_dir: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Election:
    """A preferred-leader election: leadership goes from `leader` (-1 = none) to `preferred`."""

    topic: str
    partition: int
    leader: int
    preferred: int


@dataclass(frozen=True, slots=True)
class Skip:
    """A partition (or, with `partition` None, a whole topic) the planner left alone, and why."""

    topic: str
    partition: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class BrokerLoad:
    """One broker's counts before and after the plan.

    `leaders_after` assumes the plan completes and its elections succeed: a reassigned
    partition whose leader leaves its replicas is led by its new first replica (the controller
    elects the first target replica in the ISR, and every target replica is in the ISR when a
    reassignment completes); an elected partition is led by its preferred replica.
    """

    broker_id: int
    rack: str | None
    registered: bool
    replicas_before: int
    replicas_after: int
    preferred_before: int
    preferred_after: int
    leaders_before: int
    leaders_after: int
    disk_capacity_bytes: int | None = None
    """Load-aware plans only (None otherwise): the broker's disk capacity, where known."""
    disk_bytes_before: int | None = None
    """Bytes on the broker's disks: the sizes of the partitions it holds (`load.ClusterLoad`)."""
    disk_bytes_after: int | None = None
    bytes_in_before: float | None = None
    """Inbound bytes/s: the byte rates into every partition it holds (0 without rates)."""
    bytes_in_after: float | None = None
    leader_bytes_in_before: float | None = None
    """Bytes/s produced to the partitions it leads."""
    leader_bytes_in_after: float | None = None

    @property
    def disk_share_before(self) -> float | None:
        return _share(self.disk_bytes_before, self.disk_capacity_bytes)

    @property
    def disk_share_after(self) -> float | None:
        return _share(self.disk_bytes_after, self.disk_capacity_bytes)


def _share(used: int | None, capacity: int | None) -> float | None:
    return None if used is None or not capacity else round(used / capacity, 6)


GoalStatus = Literal["held", "violated", "unchecked", "met", "improved", "unchanged", "worse"]


@dataclass(frozen=True, slots=True)
class Goal:
    """How a load-aware plan stands on one goal (hard: must hold; soft: spread before → after).

    `broker` is set when the status is about one broker (a hard goal violated on it); `detail`
    says what and why in words (e.g. which data was missing for an unchecked goal)."""

    goal: str
    hard: bool
    status: GoalStatus
    detail: str = ""
    broker: int | None = None
    before: float | None = None
    after: float | None = None


@dataclass(frozen=True)
class Plan:
    """A remediation plan computed from one snapshot; see the module docstring."""

    kind: PlanKind
    plan_id: str
    cluster: str
    snapshot_id: str
    captured_at: str
    request: Mapping[str, Any]
    reassignments: tuple[Move, ...]
    elections: tuple[Election, ...]
    skipped: tuple[Skip, ...]
    brokers: tuple[BrokerLoad, ...]
    figures: Mapping[str, int | float | None] = field(default_factory=dict)
    goals: tuple[Goal, ...] = ()
    """Load-aware plans: every hard and soft goal's status (empty for count-based plans)."""
    dir_moves: tuple[DirMove, ...] = ()
    """`log_dir_balance` plans: replicas moved between log dirs of their broker (no reassignment)."""

    @property
    def moves(self) -> int:
        """Replicas added to brokers over the whole plan."""
        return sum(m.moves for m in self.reassignments)

    @property
    def estimated_bytes(self) -> int | None:
        """Bytes to copy where partition sizes are known; None when no moved partition has one."""
        known = [m.estimated_bytes for m in self.reassignments if m.moves and m.estimated_bytes is not None]
        return sum(known) if known else None

    @property
    def moves_without_size(self) -> int:
        return sum(m.moves for m in self.reassignments if m.size_bytes is None)

    @property
    def is_empty(self) -> bool:
        """Nothing to write: no move, no election, no cordon to lift (a rollback whose moves the cluster
        already undid still uncordons what its source plan cordoned) and no registration to remove."""
        moves = self.reassignments or self.elections or self.dir_moves
        return not moves and not self.request.get(UNCORDON_FIRST) and self.kind != "unregister_broker"

    def to_reassignment_json(self, log_dirs: bool = False) -> dict[str, Any]:
        """Kafka's reassignment file for the targets (`log_dirs` "any" per replica if asked)."""
        return _reassignment_file([(m.topic, m.partition, m.target) for m in self.reassignments], log_dirs)

    def rollback_json(self, log_dirs: bool = False) -> dict[str, Any]:
        """Kafka's reassignment file that puts every touched partition back as it was."""
        return _reassignment_file([(m.topic, m.partition, m.current) for m in self.reassignments], log_dirs)

    def election_json(self) -> dict[str, Any]:
        return {"version": 1, "partitions": [{"topic": e.topic, "partition": e.partition} for e in self.elections]}

    def throttles(self) -> dict[str, Any]:
        """Kafka's throttle settings for this plan: per topic, `leader.replication.throttled.replicas`
        = "partition:broker" for every current replica of a reassigned partition (the sources) and
        `follower.replication.throttled.replicas` for every new replica (the destinations), each a
        comma-joined, string-sorted set as Kafka writes it; `brokers`: every source and destination,
        which get `leader/follower.replication.throttled.rate`."""
        leader: dict[str, set[str]] = {}
        follower: dict[str, set[str]] = {}
        brokers: set[int] = set()
        for m in self.reassignments:
            leader.setdefault(m.topic, set()).update(f"{m.partition}:{b}" for b in m.current)
            follower.setdefault(m.topic, set()).update(f"{m.partition}:{b}" for b in m.added)
            brokers.update(m.current, m.added)
        topics = {
            topic: {
                LEADER_THROTTLED: ",".join(sorted(leader[topic])),
                FOLLOWER_THROTTLED: ",".join(sorted(follower[topic])),
            }
            for topic in sorted(leader)
        }
        return {"topics": topics, "brokers": sorted(brokers)}

    def summary(self) -> dict[str, Any]:
        """A few numbers small enough for XCom and logs."""
        return {
            "kind": self.kind,
            "plan_id": self.plan_id,
            "cluster": self.cluster,
            "snapshot_id": self.snapshot_id,
            "partitions": len(self.reassignments),
            "moves": self.moves,
            "elections": len(self.elections),
            "skipped": len(self.skipped),
            "estimated_bytes": self.estimated_bytes,
            **({"dir_moves": len(self.dir_moves)} if self.dir_moves else {}),
            **{k: v for k, v in self.figures.items()},
        }

    def to_document(self) -> dict[str, Any]:
        """The whole plan as JSON-ready data (for the lake and for review)."""
        return {
            **self.summary(),
            "captured_at": self.captured_at,
            "request": dict(self.request),
            "reassignment": self.to_reassignment_json(),
            "rollback": self.rollback_json(),
            "election": self.election_json(),
            "throttles": self.throttles(),
            "skipped": [{"topic": s.topic, "partition": s.partition, "reason": s.reason} for s in self.skipped],
            "brokers": [_load_row(b) for b in self.brokers],
            "goals": [_goal_row(g) for g in self.goals],
            **({"dir_moves": [dir_move_row(d) for d in self.dir_moves]} if self.dir_moves else {}),
        }


def _reassignment_file(rows: list[tuple[str, int, tuple[int, ...]]], log_dirs: bool) -> dict[str, Any]:
    partitions = []
    for topic, partition, replicas in rows:
        entry: dict[str, Any] = {"topic": topic, "partition": partition, "replicas": list(replicas)}
        if log_dirs:
            entry["log_dirs"] = ["any"] * len(replicas)
        partitions.append(entry)
    return {"version": 1, "partitions": partitions}


def _load_row(load: BrokerLoad) -> dict[str, Any]:
    row = {name: getattr(load, name) for name in BrokerLoad.__slots__}
    if load.disk_bytes_before is not None:
        row["disk_share_before"], row["disk_share_after"] = load.disk_share_before, load.disk_share_after
    return row


def dir_move_row(move: DirMove) -> dict[str, Any]:
    return {name: getattr(move, name) for name in DirMove.__slots__}


def _goal_row(goal: Goal) -> dict[str, Any]:
    return {name: getattr(goal, name) for name in Goal.__slots__}


def build_plan(
    kind: PlanKind,
    view: ClusterView,
    request: Mapping[str, Any],
    targets: Mapping[TopicPartition, tuple[int, ...]],
    *,
    elections: list[Election] | None = None,
    skipped: list[Skip] | None = None,
    figures: Mapping[str, int | float | None] | None = None,
    partition_sizes: PartitionSizes | None = None,
    load: ClusterLoad | None = None,
    goals: tuple[Goal, ...] = (),
    dir_moves: tuple[DirMove, ...] = (),
) -> Plan:
    """Assemble a plan from a planner's targets (partition → new replica list); with `load`, the
    per-broker bytes before and after and the moves' sizes come from it. `dir_moves`: a log dir
    balance's moves between a broker's log dirs (they count in the plan id)."""
    sizes = partition_sizes or (load.sizes if load is not None else {})
    moves = tuple(
        Move(tp[0], tp[1], view.assignment[tp], targets[tp], sizes.get(tp))
        for tp in sorted(targets)
        if targets[tp] != view.assignment[tp]
    )
    chosen = tuple(sorted(elections or [], key=lambda e: (e.topic, e.partition)))
    skips = tuple(sorted(skipped or [], key=lambda s: (s.topic, -1 if s.partition is None else s.partition)))
    canonical = json.dumps(
        [kind, view.cluster, view.snapshot_id, request, [(m.topic, m.partition, m.target) for m in moves],
         [(e.topic, e.partition) for e in chosen],
         *([[(d.topic, d.partition, d.broker, d.target_dir) for d in dir_moves]] if dir_moves else [])],
        sort_keys=True, default=str,
    )  # fmt: skip
    return Plan(
        kind=kind,
        plan_id=hashlib.sha256(canonical.encode()).hexdigest()[:16],
        cluster=view.cluster,
        snapshot_id=view.snapshot_id,
        captured_at=view.snapshot.captured_at.isoformat(),
        request=dict(request),
        reassignments=moves,
        elections=chosen,
        skipped=skips,
        brokers=broker_loads(view, moves, chosen, load),
        figures=dict(figures or {}),
        goals=goals,
        dir_moves=dir_moves,
    )


def broker_loads(
    view: ClusterView, moves: tuple[Move, ...], elections: tuple[Election, ...], load: ClusterLoad | None = None
) -> tuple[BrokerLoad, ...]:
    """Per-broker counts (and with `load` bytes) before and after (see `BrokerLoad` for what
    "after" assumes)."""
    replicas_before, preferred_before = view.replica_counts(), view.preferred_counts()
    leaders_before = view.leader_counts()
    replicas_after, preferred_after = Counter(replicas_before), Counter(preferred_before)
    leaders_after: Counter[int] = Counter()
    leader_of = {tp: view.leader(tp) for tp in view.assignment}
    for m in moves:
        replicas_after.subtract(m.current)
        replicas_after.update(m.target)
        if m.current:
            preferred_after[m.current[0]] -= 1
        if m.target:
            preferred_after[m.target[0]] += 1
        tp = (m.topic, m.partition)
        if leader_of[tp] not in m.target:
            leader_of[tp] = m.target[0]
    for e in elections:
        leader_of[(e.topic, e.partition)] = e.preferred
    leaders_after.update(b for b in leader_of.values() if b != NO_LEADER)
    holding = {b for b, n in replicas_before.items() if n} | {b for b, n in replicas_after.items() if n}
    brokers = set(view.live) | holding
    bytes_of = _bytes(view, moves, leader_of, load) if load is not None else {}
    return tuple(
        BrokerLoad(
            broker_id=b,
            rack=view.racks.get(b),
            registered=b in view.live,
            replicas_before=replicas_before[b],
            replicas_after=replicas_after[b],
            preferred_before=preferred_before[b],
            preferred_after=preferred_after[b],
            leaders_before=leaders_before[b],
            leaders_after=leaders_after[b],
            **bytes_of.get(b, {}),
        )
        for b in sorted(brokers)
    )


def _bytes(
    view: ClusterView, moves: tuple[Move, ...], leader_after: Mapping[TopicPartition, int], load: ClusterLoad
) -> dict[int, dict[str, Any]]:
    """Per broker: disk bytes, inbound and leader bytes-in before and after the plan."""
    after = dict(view.assignment)
    after.update({(m.topic, m.partition): m.target for m in moves})
    sums: dict[str, Counter[int]] = {}
    for name, assignment, leaders in (("before", view.assignment, view.leaders), ("after", after, leader_after)):
        disk, into, lead = Counter[int](), Counter[int](), Counter[int]()
        for tp, replicas in assignment.items():
            size, rate = load.sizes.get(tp, 0), load.bytes_in(tp)
            for b in replicas:
                disk[b] += size
                if rate:
                    into[b] += rate  # type: ignore[assignment]  # Counter of floats
            if rate and tp in leaders:
                lead[leaders[tp]] += rate  # type: ignore[assignment]
        sums[f"disk_bytes_{name}"], sums[f"bytes_in_{name}"], sums[f"leader_bytes_in_{name}"] = disk, into, lead
    brokers = set(view.live) | {b for r in after.values() for b in r} | {b for r in view.assignment.values() for b in r}
    return {
        b: {
            "disk_capacity_bytes": load.disk_capacity.get(b),
            **{k: (int(c[b]) if k.startswith("disk") else float(c[b])) for k, c in sums.items()},
        }
        for b in brokers
    }
