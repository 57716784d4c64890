"""The silence an executing plan holds over what it causes on its own partitions and brokers: their
under-replication while replicas copy, and the leader imbalance its leader moves make
(`kafka_ops.silences`). Anything else still pages: a broker that dies during the plan, or its partitions
going under their min ISR (a reassignment never does that by itself; one that does is failing writes).

The silence is a lease: it ends `lease` after it was last renewed, and the execution renews it while it
waits on its batches and ends it when it stops, however it stops. An executor that dies (its worker killed)
leaves a silence that runs out by itself; a run that resumes the plan sets a new one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kafka_ops.alerting.silence_store import add_silence, end_silence
from kafka_ops.errors import KafkaOpsError
from kafka_ops.planning.plan import Plan
from kafka_ops.problems.leaders import LEADER_IMBALANCE
from kafka_ops.problems.partitions import UNDER_REPLICATED
from kafka_ops.silences import Silence, new_silence

log = logging.getLogger(__name__)

CAUSED = (LEADER_IMBALANCE, UNDER_REPLICATED)
"""The problems a plan causes on its own partitions and brokers while it runs."""


def plan_scope(plan: Plan) -> tuple[set[tuple[str, int]], set[int]]:
    """The partitions a plan moves, elects or moves between log dirs, and every broker it touches."""
    partitions = {(m.topic, m.partition) for m in plan.reassignments}
    partitions |= {(e.topic, e.partition) for e in plan.elections}
    partitions |= {(d.topic, d.partition) for d in plan.dir_moves}
    brokers = {b for m in plan.reassignments for b in (*m.current, *m.target)}
    brokers |= {b for e in plan.elections for b in (e.leader, e.preferred)}
    brokers |= {d.broker for d in plan.dir_moves}
    return partitions, brokers


class PlanSilence:
    """The lease on one execution's silence (module docstring). Failing to store it never stops the plan:
    the page it would have held is noise, not harm (logged)."""

    def __init__(self, plan: Plan, lake_root: str, actor: str, lease: timedelta,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:  # fmt: skip
        self.plan, self.lake_root, self.actor, self.lease, self.clock = plan, lake_root, actor, lease, clock
        self.silence: Silence | None = None

    def start(self) -> None:
        at = self.clock()
        partitions, brokers = plan_scope(self.plan)
        try:
            self.silence = add_silence(
                self.lake_root,
                new_silence(
                    self.plan.cluster,
                    starts_at=at,
                    ends_at=at + self.lease,
                    reason=f"{self.plan.kind} plan {self.plan.plan_id} is executing (its own partitions and brokers)",
                    created_by=f"plan {self.plan.plan_id} ({self.actor})",
                    partitions=partitions,
                    brokers=brokers,
                    keys=CAUSED,
                    plan_id=self.plan.plan_id,
                ),
                at,
            )
        except KafkaOpsError as e:
            log.warning("plan %s: could not silence what it causes, it may page: %s", self.plan.plan_id, e)

    def renew(self) -> None:
        """Extend the lease when less than half of it is left."""
        silence, at = self.silence, self.clock()
        if silence is None or silence.ends_at - at > self.lease / 2:
            return
        self.end()
        self.start()

    def end(self) -> None:
        silence, self.silence = self.silence, None
        if silence is None:
            return
        try:
            end_silence(self.lake_root, silence.cluster, silence.id, self.clock(), f"plan {self.plan.plan_id}")
        except KafkaOpsError as e:
            log.warning("plan %s: could not end its silence %s (it runs out at %s): %s",
                        self.plan.plan_id, silence.id, silence.ends_at, e)  # fmt: skip
