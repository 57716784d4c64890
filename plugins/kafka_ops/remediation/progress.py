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

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, cast

from kafka_ops.errors import ProgressFormatError, RemediationRefused
from kafka_ops.kafka_types import JsonReader, path_of, shown, whole_number
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition, tp_text
from kafka_ops.planning.plan import Move
from kafka_ops.remediation.live import PartitionStatus, classify, in_flight
from kafka_ops.settings import REMEDIATION_BACKENDS

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
    def from_json(cls, data: object, where: str, read: JsonReader | None = None) -> Step:
        """Strict, as `Progress.from_json`; `where` is the step's JSON path (`batches[0]`)."""
        read = read or JsonReader(where, ProgressFormatError)
        step = read.mapping(data, where)
        at = partial(path_of, where)
        raw = read.array(read.field(step, "partitions", where), at("partitions"))
        partitions = tuple(read.topic_partition(e, path_of(at("partitions"), i)) for i, e in enumerate(raw))
        if len(set(partitions)) != len(partitions):
            read.fail(at("partitions"), "lists a partition twice")
        return cls(
            index=read.count(read.field(step, "index", where), at("index")),
            partitions=partitions,
            state=cast(StepState, read.choice(read.field(step, "state", where), at("state"), STEP_STATES)),
            submitted_at=read.optional_timestamp(step.get("submitted_at"), at("submitted_at")),
            submitted_by=read.optional_text(step.get("submitted_by"), at("submitted_by")),
            done_at=read.optional_timestamp(step.get("done_at"), at("done_at")),
        )


@dataclass
class Progress:
    """Everything the executor must remember about one plan's execution (see the module docstring).

    `throttled_topics` / `throttled_brokers` name every throttle the execution has set and not yet
    removed; they are recorded *before* the throttle is written, so a crash never leaves a
    throttle nobody knows about. `cordoned_brokers` likewise names the brokers the execution
    cordoned (`cordoned.log.dirs=*`) and no cancel or rollback has uncordoned yet.
    """

    plan_id: str
    cluster: str
    backend: str
    batches: list[Step]
    elections: list[Step]
    status: Status = "running"
    throttled_topics: list[str] = field(default_factory=list)
    throttled_brokers: list[int] = field(default_factory=list)
    cordoned_brokers: list[int] = field(default_factory=list)
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
            "cordoned_brokers": sorted(self.cordoned_brokers),
            "runs": list(self.runs),
            "message": self.message,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Progress:
        """Strict: a document this code did not write is refused with `ProgressFormatError` naming
        `where` (its path) and the field; keys it does not know are ignored."""
        read = JsonReader(where, ProgressFormatError)
        doc = read.mapping(data, "")
        version = read.field(doc, "version", "")
        if not whole_number(version) or version != PROGRESS_VERSION:
            read.fail("version", f"unknown version {shown(version)} (this code writes {PROGRESS_VERSION})")
        steps = {
            key: [
                Step.from_json(s, path_of(key, i), read)
                for i, s in enumerate(read.array(read.field(doc, key, ""), key))
            ]
            for key in ("batches", "elections")
        }
        topics, brokers, cordoned, runs = (
            read.array(doc.get(key, []), key)
            for key in ("throttled_topics", "throttled_brokers", "cordoned_brokers", "runs")
        )
        return cls(
            plan_id=read.text(read.field(doc, "plan_id", ""), "plan_id"),
            cluster=read.text(read.field(doc, "cluster", ""), "cluster"),
            backend=read.choice(read.field(doc, "backend", ""), "backend", REMEDIATION_BACKENDS),
            status=cast(Status, read.choice(read.field(doc, "status", ""), "status", STATUSES)),
            batches=steps["batches"],
            elections=steps["elections"],
            throttled_topics=[read.topic(t, path_of("throttled_topics", i)) for i, t in enumerate(topics)],
            throttled_brokers=[read.broker_id(b, path_of("throttled_brokers", i)) for i, b in enumerate(brokers)],
            cordoned_brokers=[read.broker_id(b, path_of("cordoned_brokers", i)) for i, b in enumerate(cordoned)],
            runs=[read.text(r, path_of("runs", i), empty=True) for i, r in enumerate(runs)],
            message=read.optional_text(doc.get("message"), "message"),
            updated_at=read.optional_timestamp(doc.get("updated_at"), "updated_at"),
        )

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
