"""What every run of the executor on one plan works with: the plan, the lake, the cluster's settings,
the back end that writes, where live state is read, who runs it, the pacing and the clock. The verbs
(`reassignment`, `elections`, `cancellation`, `throttle_removal`) share one `RunContext`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_ops.errors import ConfigError
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.plan import Election, Move, Plan
from kafka_ops.remediation.backends import Backend
from kafka_ops.remediation.batch_runner import ExecutionOptions, PlanRun
from kafka_ops.remediation.batching import chunk_elections, split_moves
from kafka_ops.remediation.live import LiveReader, LiveSource
from kafka_ops.remediation.progress import Progress, Step
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget


@dataclass(frozen=True)
class RunContext:
    """One plan on one cluster, as a run of the executor sees it."""

    plan: Plan
    lake: Lake
    config: ClusterConfig
    backend: Backend
    reader: LiveSource
    actor: str
    run_id: str | None
    options: ExecutionOptions = field(default_factory=ExecutionOptions)
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    moves: dict[TopicPartition, Move] = field(init=False)
    """The plan's reassignments by partition."""
    elections: dict[TopicPartition, Election] = field(init=False)
    """The plan's elections by partition."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "moves", {(m.topic, m.partition): m for m in self.plan.reassignments})
        object.__setattr__(self, "elections", {(e.topic, e.partition): e for e in self.plan.elections})

    def preferred(self, tp: TopicPartition) -> int:
        """The leader the plan wants for `tp`: its target's first replica, else its election's."""
        move = self.moves.get(tp)
        return move.target[0] if move is not None else self.elections[tp].preferred

    def run_arguments(self) -> dict[str, Any]:
        """What a run of the executor (`batch_runner.PlanRun` and `BatchRun`) is built with, besides the plan."""
        return {"lake": self.lake, "backend_name": self.backend.name, "actor": self.actor, "run_id": self.run_id,
                "options": self.options, "clock": self.clock, "sleep": self.sleep}  # fmt: skip


class ContextRun(PlanRun):
    """A run of one verb (`PlanRun`, or `BatchRun` when listed after this class) built from a
    `RunContext`, its progress split from the plan's reassignments and elections on its first run."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        super().__init__(ctx.plan, **ctx.run_arguments())

    def new_progress(self) -> Progress:
        return reassignment_progress(self.ctx)


def reassignment_progress(ctx: RunContext) -> Progress:
    """The plan's reassignments split into batches and its elections into chunks, on its first run."""
    o, plan = ctx.options, ctx.plan
    batches = split_moves(plan.reassignments, o.batch_max_partitions, o.batch_max_moves_per_broker)
    chunks = chunk_elections(plan.elections, o.election_batch_size)
    return Progress(
        plan_id=plan.plan_id,
        cluster=plan.cluster,
        backend=ctx.backend.name,
        batches=[Step(i, tuple((m.topic, m.partition) for m in b)) for i, b in enumerate(batches)],
        elections=[Step(i, tuple((e.topic, e.partition) for e in c)) for i, c in enumerate(chunks)],
    )


def live_source(plan: Plan, zookeeper: ZooKeeperTarget | None, reader: LiveSource | None) -> LiveSource:
    """Where live state is read: `reader` (a KRaft cluster's `KRaftLiveReader`), else ZooKeeper."""
    if reader is not None:
        return reader
    if zookeeper is None:
        raise ConfigError(f"plan {plan.plan_id}: no live source given (a ZooKeeper target or a reader)")
    return LiveReader(plan.cluster, zookeeper)


def leader(live: ClusterSnapshot, tp: TopicPartition) -> int:
    """The partition's leader in a live read (-1: none, or not in the read)."""
    state = live.partition_states.get(tp)
    return -1 if state is None else state.leader


def reasons(refused: dict[TopicPartition, str]) -> str:
    """Why the cluster refused partitions, for an audit row (the first ten)."""
    return "; ".join(f"{t}-{p}: {why}" for (t, p), why in sorted(refused.items())[:10])
