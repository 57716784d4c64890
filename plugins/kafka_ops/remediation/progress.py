"""Execution progress of one plan, and the rule that decides what to do with each batch on (re)run.

The progress document is the executor's memory across runs and crashes (stored by `store`).
Each reassignment batch and election chunk is a *step* that moves through

    pending → submitting → submitted → done

`submitting` is written *before* the write to the cluster and `submitted` after it, so a run
killed in between leaves `submitting`: the next run cannot know from the document whether the
write reached the cluster, and asks the cluster instead (`decide`). The executor never trusts
the document alone; it never trusts the cluster alone either:

| step state           | live partitions of the step                    | decision                       |
|----------------------|------------------------------------------------|--------------------------------|
| done                 | (not read)                                     | skip                           |
| any                  | one moved elsewhere / towards another target / | refuse: the cluster changed    |
|                      | gone                                           |                                |
| any                  | some in flight towards the plan's targets      | wait (never resubmit)          |
| any                  | all at their targets                           | mark done (no write)           |
| pending / submitting | some at base, the rest at target               | submit only those at base      |
| submitted            | some back at base, nothing in flight           | refuse: it was cancelled or    |
|                      |                                                | rolled back; never submit twice|

So a batch is written to the cluster at most once per plan, whatever crashed when.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from kafka_ops.errors import RemediationRefused
from kafka_ops.model import ClusterSnapshot, TopicPartition
from kafka_ops.planning.plan import Move
from kafka_ops.remediation.live import PartitionStatus, classify, in_flight, tp_text

PROGRESS_VERSION = 1
StepState = Literal["pending", "submitting", "submitted", "done"]
Status = Literal["running", "done", "failed", "stuck", "cancelled"]
STEP_STATES: tuple[StepState, ...] = ("pending", "submitting", "submitted", "done")
STATUSES: tuple[Status, ...] = ("running", "done", "failed", "stuck", "cancelled")
Action = Literal["skip", "submit", "wait", "mark_done"]


@dataclass
class Step:
    """One reassignment batch or election chunk: its partitions (fixed on the first run) and state."""

    index: int
    partitions: tuple[TopicPartition, ...]
    state: StepState = "pending"
    submitted_at: str | None = None
    submitted_by: str | None = None
    done_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "partitions": [[t, p] for t, p in self.partitions],
            "state": self.state,
            "submitted_at": self.submitted_at,
            "submitted_by": self.submitted_by,
            "done_at": self.done_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> Step:
        state = data.get("state")
        if state not in STEP_STATES:
            raise ValueError(f"{where}.state: expected one of {list(STEP_STATES)}, got {state!r}")
        raw = data.get("partitions")
        if not isinstance(raw, list) or not all(
            isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) and type(e[1]) is int for e in raw
        ):
            raise ValueError(f"{where}.partitions: expected a list of [topic, partition], got {raw!r}")
        return cls(
            index=int(data["index"]),
            partitions=tuple((e[0], e[1]) for e in raw),
            state=cast(StepState, state),
            submitted_at=data.get("submitted_at"),
            submitted_by=data.get("submitted_by"),
            done_at=data.get("done_at"),
        )


@dataclass
class Progress:
    """Everything the executor must remember about one plan's execution (see the module docstring).

    `throttled_topics` / `throttled_brokers` name every throttle the execution has set and not yet
    removed; they are recorded *before* the throttle is written, so a crash never leaves a
    throttle nobody knows about.
    """

    plan_id: str
    cluster: str
    backend: str
    batches: list[Step]
    elections: list[Step]
    status: Status = "running"
    throttled_topics: list[str] = field(default_factory=list)
    throttled_brokers: list[int] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    message: str | None = None
    updated_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PROGRESS_VERSION,
            "plan_id": self.plan_id,
            "cluster": self.cluster,
            "backend": self.backend,
            "status": self.status,
            "batches": [s.to_json() for s in self.batches],
            "elections": [s.to_json() for s in self.elections],
            "throttled_topics": sorted(self.throttled_topics),
            "throttled_brokers": sorted(self.throttled_brokers),
            "runs": list(self.runs),
            "message": self.message,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> Progress:
        """Strict: a document this code did not write is refused with the path and field."""
        try:
            if not isinstance(data, Mapping):
                raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            if data.get("version") != PROGRESS_VERSION:
                raise ValueError(f"unknown version {data.get('version')!r} (this code writes {PROGRESS_VERSION})")
            status = data.get("status")
            if status not in STATUSES:
                raise ValueError(f"status: expected one of {list(STATUSES)}, got {status!r}")
            return cls(
                plan_id=str(data["plan_id"]),
                cluster=str(data["cluster"]),
                backend=str(data["backend"]),
                status=cast(Status, status),
                batches=[Step.from_json(s, f"batches[{i}]") for i, s in enumerate(data["batches"])],
                elections=[Step.from_json(s, f"elections[{i}]") for i, s in enumerate(data["elections"])],
                throttled_topics=[str(t) for t in data.get("throttled_topics", [])],
                throttled_brokers=[int(b) for b in data.get("throttled_brokers", [])],
                runs=[str(r) for r in data.get("runs", [])],
                message=data.get("message"),
                updated_at=data.get("updated_at"),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{where}: not a progress document this executor wrote: {e}") from e

    @property
    def submitted_any(self) -> bool:
        return any(s.state != "pending" for s in [*self.batches, *self.elections])


@dataclass(frozen=True)
class Decision:
    """What to do with one reassignment batch now; `submit` holds the moves to write (for "submit")."""

    action: Action
    submit: tuple[Move, ...] = ()
    reason: str = ""


def decide(plan_id: str, step: Step, moves: Sequence[Move], live: ClusterSnapshot) -> Decision:
    """The resume rule for one batch (table in the module docstring). Raises `RemediationRefused`
    when the cluster no longer matches the plan or the batch was undone after its submission."""
    if step.state == "done":
        return Decision("skip", reason="already done")
    moving = in_flight(live)
    status: dict[PartitionStatus, list[Move]] = {}
    for m in moves:
        status.setdefault(classify(m, live, moving), []).append(m)
    drifted = [*status.get("elsewhere", []), *status.get("other_in_flight", []), *status.get("missing", [])]
    if drifted:
        raise RemediationRefused(
            plan_id, "live assignment equals the plan's base", drift_message(plan_id, drifted, live)
        )
    if status.get("in_flight"):
        return Decision("wait", reason=f"{len(status['in_flight'])} partition(s) already in flight to their targets")
    base = tuple(status.get("base", []))
    if not base:
        return Decision("mark_done", reason="every partition is already at its target")
    if step.state == "submitted":
        raise RemediationRefused(
            plan_id,
            "never apply a batch twice",
            f"batch {step.index} was submitted ({step.submitted_at} by {step.submitted_by}) but "
            f"{tp_text([(m.topic, m.partition) for m in base])} {'is' if len(base) == 1 else 'are'} back at the "
            "original replicas with nothing in flight: the reassignment was cancelled or rolled back. Not submitting "
            "it again; make a new plan",
        )
    return Decision("submit", submit=base, reason=f"{len(base)} partition(s) at their base")


def drift_message(plan_id: str, drifted: Sequence[Move], live: ClusterSnapshot) -> str:
    """`cluster changed since plan <id>: t-p is now [..], the plan was based on [..]` for each."""
    moving = in_flight(live)
    parts = []
    for m in sorted(drifted, key=lambda m: (m.topic, m.partition))[:10]:
        tp = (m.topic, m.partition)
        topic = live.topics.get(m.topic)
        if topic is None or m.partition not in topic.partitions:
            now = "gone"
        elif tp in moving:
            now = f"being reassigned to {list(moving[tp])}"
        else:
            now = f"now {list(topic.partitions[m.partition])}"
        parts.append(f"{m.topic}-{m.partition} is {now}, the plan was based on {list(m.current)}")
    more = f" (and {len(drifted) - 10} more)" if len(drifted) > 10 else ""
    return (
        f"cluster changed since plan {plan_id}: " + "; ".join(parts) + more + ". Make a new plan from a fresh snapshot"
    )
