"""Intra-broker balance: move replicas between one broker's log dirs (JBOD) to even their use.

No replica changes broker: each move is a `DirMove` the executor applies with AlterReplicaLogDirs
(`remediation.log_dir_moves`), the broker copying the replica into a future replica in the target dir
and swapping it in. Works per broker on the snapshot's DescribeLogDirs rows (`log_dirs`,
`replica_sizes`):

* the dirs that take part are the broker's dirs reported without error: a dir in error
  (KAFKA_STORAGE_ERROR, offline) never receives a replica, and its replicas are unknown;
* a dir's use is the bytes of the replicas in it, future replicas (copies in flight) included;
* targets: the broker's bytes shared in proportion to each dir's `total_bytes` when every dir
  taking part reports one, else equally; a dir within `DISK_TOLERANCE` of its target is balanced;
* hard goal `disk_capacity` per dir (where its `total_bytes` is known): no move takes a dir above
  `max_disk_share` of it; a dir already above is reported violated, never made worse;
* a replica that has a future replica on the broker (already moving between dirs), or whose
  partition the shared rules leave alone (`view.blocking_reason`), stays where it is.

A move goes from the dir furthest above its target to a dir below its target, and takes the largest
replica that carries neither dir past its band edge (`target ± tolerance`), so no byte moves twice
and the bytes moved stay near the lower bound Σ max(0, use − (target + tolerance)) over dirs.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.load import DISK_CAPACITY
from kafka_ops.planning.load_balance import DISK_TOLERANCE
from kafka_ops.planning.plan import DirMove, Goal, GoalStatus, Plan, Skip, build_plan
from kafka_ops.planning.view import ClusterView

LOG_DIR_SPREAD = "log_dir_spread"
"""The soft goal: per broker, the largest minus the smallest dir fill (use over target)."""
MOVING_BETWEEN_DIRS = "replica is already moving between log dirs (a future replica exists)"


@dataclass
class _Dir:
    path: str
    total: int | None
    used: float = 0.0
    target: float = 0.0
    tol: float = 0.0
    limit: float | None = None
    replicas: list[TopicPartition] = field(default_factory=list)
    """Movable replicas, by size descending; `neg` their negated sizes (for bisection)."""
    neg: list[int] = field(default_factory=list)


def plan_log_dir_balance(
    snapshot: ClusterSnapshot,
    *,
    brokers: Sequence[int] = (),
    max_disk_share: float = 0.8,
    max_moves: int | None = None,
) -> Plan:
    """Plan the moves that even each broker's log dirs (see the module docstring); `brokers`: only these
    (empty: every broker with two or more healthy log dirs)."""
    if not 0 < max_disk_share <= 1:
        raise PlanError("max_disk_share", f"must be a share of a disk in (0, 1], got {max_disk_share!r}")
    if max_moves is not None and max_moves < 1:
        raise PlanError("max_moves", f"must be at least 1, got {max_moves}")
    if not snapshot.log_dirs:
        raise PlanError(
            "snapshot",
            f"snapshot {snapshot.snapshot_id} has no log dirs (DescribeLogDirs was not collected): nothing to balance",
        )
    view = ClusterView(snapshot)
    known = {d.broker_id for d in snapshot.log_dirs}
    unknown = sorted(set(brokers) - known)
    if unknown:
        raise PlanError("brokers", f"broker(s) {unknown} reported no log dir in snapshot {snapshot.snapshot_id}")
    chosen = sorted(set(brokers) or known)
    moves: list[DirMove] = []
    skipped: dict[TopicPartition, Skip] = {}
    goals: list[Goal] = []
    figures = {"lower_bound_bytes": 0, "bytes_moved": 0, "brokers_balanced": 0}
    for broker in chosen:
        dirs, moving = _dirs_of(snapshot, broker, max_disk_share)
        for tp in moving:
            skipped.setdefault(tp, Skip(tp[0], tp[1], f"{MOVING_BETWEEN_DIRS} on broker {broker}"))
        blocked = {tp for d in dirs.values() for tp in d.replicas if view.blocking_reason(tp) is not None}
        for tp in sorted(blocked):
            skipped.setdefault(tp, Skip(tp[0], tp[1], view.blocking_reason(tp) or ""))
        if len(dirs) < 2:
            continue
        balancer = _BrokerBalance(broker, dirs, snapshot, blocked | moving)
        spread_before = balancer.spread()
        figures["lower_bound_bytes"] += balancer.lower_bound()
        balancer.run(None if max_moves is None else max_moves - len(moves))
        moves.extend(balancer.moves)
        figures["bytes_moved"] += sum(m.size_bytes for m in balancer.moves)
        figures["brokers_balanced"] += 1
        goals.extend(balancer.capacity_goals())
        after = balancer.spread()
        status: GoalStatus = "unchanged" if after == spread_before else "improved" if after < spread_before else "worse"
        goals.append(Goal(LOG_DIR_SPREAD, False, status, f"broker {broker}: dir fill (use / target), max - min",
                          broker, round(spread_before, 6), round(after, 6)))  # fmt: skip
    lower = figures["lower_bound_bytes"]
    ratio = round(figures["bytes_moved"] / lower, 4) if lower else None
    request = {"brokers": list(brokers) or None, "max_disk_share": max_disk_share, "max_moves": max_moves}
    return build_plan(
        "log_dir_balance",
        view,
        request,
        {},
        skipped=sorted(skipped.values(), key=lambda s: (s.topic, s.partition)),
        figures={**figures, "bytes_over_lower_bound": ratio, "disk_tolerance": DISK_TOLERANCE},
        goals=tuple(goals),
        dir_moves=tuple(moves),
    )


def _dirs_of(snapshot: ClusterSnapshot, broker: int, share: float) -> tuple[dict[str, _Dir], set[TopicPartition]]:
    """The broker's healthy dirs with their use and movable replicas, and the partitions moving between dirs."""
    dirs = {d.path: _Dir(d.path, d.total_bytes) for d in snapshot.log_dirs if d.broker_id == broker and d.error is None}
    moving: set[TopicPartition] = set()
    for r in snapshot.replica_sizes:
        if r.broker_id != broker or r.log_dir not in dirs:
            continue
        dirs[r.log_dir].used += r.size_bytes
        if r.is_future:
            moving.add((r.topic, r.partition))
        else:
            dirs[r.log_dir].replicas.append((r.topic, r.partition))
    totals = [d.total for d in dirs.values()]
    weighted = all(t for t in totals)
    whole = sum(d.used for d in dirs.values())
    weight_sum = float(sum(t or 0 for t in totals)) if weighted else float(len(dirs))
    for d in dirs.values():
        d.target = whole * ((d.total or 0) if weighted else 1.0) / (weight_sum or 1.0)
        d.tol = d.target * DISK_TOLERANCE
        d.limit = None if d.total is None else d.total * share
    return dirs, moving


class _BrokerBalance:
    """The move loop of one broker (module docstring)."""

    def __init__(
        self, broker: int, dirs: dict[str, _Dir], snapshot: ClusterSnapshot, fixed: Collection[TopicPartition]
    ) -> None:
        self.broker = broker
        self.dirs = dirs
        self.size = {(r.topic, r.partition): r.size_bytes for r in snapshot.replica_sizes
                     if r.broker_id == broker and not r.is_future}  # fmt: skip
        self.over_before = {p for p, d in dirs.items() if d.limit is not None and d.used > d.limit}
        for d in dirs.values():
            d.replicas = sorted((tp for tp in d.replicas if tp not in fixed), key=lambda tp: (-self.size[tp], tp))
            d.neg = [-self.size[tp] for tp in d.replicas]
        self.moves: list[DirMove] = []

    def lower_bound(self) -> int:
        return round(sum(max(0.0, d.used - d.target - d.tol) for d in self.dirs.values()))

    def spread(self) -> float:
        fills = [d.used / d.target for d in self.dirs.values() if d.target]
        return max(fills) - min(fills) if fills else 0.0

    def run(self, most: int | None) -> None:
        stuck: set[str] = set()
        while most is None or len(self.moves) < most:
            sources = [d for d in self.dirs.values() if d.path not in stuck and d.replicas]
            if not sources:
                return
            source = max(sources, key=lambda d: (d.used - d.target, d.path))
            receivers = sorted((d for d in self.dirs.values() if d is not source and d.used < d.target),
                               key=lambda d: (d.used - d.target, d.path))  # fmt: skip
            if source.used - source.target <= source.tol and all(d.target - d.used <= d.tol for d in receivers):
                return
            if not any(self._give(source, dest) for dest in receivers):
                stuck.add(source.path)

    def _give(self, source: _Dir, dest: _Dir) -> bool:
        """Move the largest replica that keeps both dirs inside their bands and `dest` under its limit."""
        most = min(source.used - (source.target - source.tol), dest.target + dest.tol - dest.used)
        if dest.limit is not None:
            most = min(most, dest.limit - dest.used)
        useful = max(source.tol, dest.tol) * 0.05  # KB-sized replicas never matter to a 2 % band
        i = bisect.bisect_left(source.neg, -most)
        if i >= len(source.replicas) or -source.neg[i] < useful:
            return False
        tp, size = source.replicas.pop(i), -source.neg.pop(i)
        source.used -= size
        dest.used += size
        self.moves.append(DirMove(tp[0], tp[1], self.broker, source.path, dest.path, size))
        return True

    def capacity_goals(self) -> list[Goal]:
        """Hard goal `disk_capacity` per dir with a known total: held, or violated (it was before the plan)."""
        out = []
        for path, d in sorted(self.dirs.items()):
            if d.limit is None:
                continue
            if d.used > d.limit:
                why = (
                    "above it before the plan: no dir of the broker could take enough"
                    if path in self.over_before
                    else ""
                )
                out.append(Goal(DISK_CAPACITY, True, "violated", f"log dir {path} ({why})", self.broker,
                                None, round(d.used / (d.total or 1), 6)))  # fmt: skip
            else:
                out.append(Goal(DISK_CAPACITY, True, "held", f"log dir {path}", self.broker, None,
                                round(d.used / (d.total or 1), 6)))  # fmt: skip
        return out
