"""Small hand-built snapshots for the planner tests, and the invariants every plan must keep."""

from __future__ import annotations

import json
from collections.abc import Mapping

from kafka_ops.model.cluster import ClusterSnapshot, ReassignmentRequest, TopicAssignment, TopicPartition
from kafka_ops.planning import Plan
from kafka_ops.planning.placement import required_racks, spread
from kafka_ops.planning.view import ClusterView
from tests.unit.snapshots import AT, broker, state

Assignment = Mapping[str, Mapping[int, tuple[int, ...]]]


def cluster(
    racks: Mapping[int, str | None],
    topics: Assignment,
    *,
    leaders: Mapping[TopicPartition, int] | None = None,
    isr: Mapping[TopicPartition, tuple[int, ...]] | None = None,
    snapshot_id: str = "s1",
) -> ClusterSnapshot:
    """Brokers `racks` are registered (live); each partition is led by its first live replica with
    every live replica in the ISR, unless `leaders` / `isr` say otherwise."""
    snap = ClusterSnapshot(cluster="c1", snapshot_id=snapshot_id, captured_at=AT, zookeeper="zk:2181/kafka")
    snap.brokers = {b: broker(b, rack) for b, rack in racks.items()}
    leaders, isr = leaders or {}, isr or {}
    for topic, partitions in topics.items():
        snap.topics[topic] = TopicAssignment(topic, f"id-{topic}", dict(partitions), {}, {}, 3)
        for p, replicas in partitions.items():
            live = tuple(b for b in replicas if b in racks)
            leader = leaders.get((topic, p), live[0] if live else -1)
            snap.partition_states[(topic, p)] = state(topic, p, leader, isr.get((topic, p), live))
    return snap


def reassigning(snap: ClusterSnapshot, topic: str, partition: int, adding: tuple[int, ...]) -> None:
    """Mark a partition as being reassigned: target+original replicas, `adding` non-empty."""
    t = snap.topics[topic]
    original = t.partitions[partition]
    t.partitions[partition] = (*adding, *original)
    t.adding_replicas[partition] = adding
    snap.reassignment_requests.append(ReassignmentRequest(topic, partition, (*adding, *original[1:])))


def replicas_per_broker(plan: Plan) -> dict[int, int]:
    return {b.broker_id: b.replicas_after for b in plan.brokers}


def check_invariants(plan: Plan, snap: ClusterSnapshot, *, replication_factor: int | None = None) -> None:
    """What every reassignment plan must keep (see the planning package docs)."""
    view = ClusterView(snap)
    elected = {(e.topic, e.partition): e.preferred for e in plan.elections}
    assert plan.snapshot_id == snap.snapshot_id and plan.cluster == snap.cluster
    for m in plan.reassignments:
        tp = (m.topic, m.partition)
        assert m.current == view.assignment[tp], "the rollback is the exact current assignment"
        assert tp not in view.reassigning, "a partition under reassignment was touched"
        assert len(set(m.target)) == len(m.target), f"duplicate replica in {m.target}"
        assert all(b in view.live for b in m.added), f"{tp}: new replica on an unregistered broker {m.added}"
        assert len(m.target) == (replication_factor or len(m.current))
        need = required_racks(len(m.target), view.racks_available)
        before, after = spread(m.current, view.rack_of), spread(m.target, view.rack_of)
        assert after >= min(before, need), f"{tp}: rack spread {before} -> {after}"
        if plan.kind in ("replication_factor", "replica_balance") and m.current[0] in m.target:
            # a load-aware plan reorders to even leadership (`load_leaders`), and then hands it over
            handed = plan.request.get("load_aware") and (
                elected.get(tp) == m.target[0] or view.leader(tp) not in m.target[1:]
            )
            assert m.target[0] == m.current[0] or handed, f"{tp}: needless leader movement {m.current} -> {m.target}"
    targets = {(m.topic, m.partition): m.target for m in plan.reassignments}
    for e in plan.elections:
        replicas = targets.get((e.topic, e.partition), view.assignment[(e.topic, e.partition)])
        assert replicas[0] == e.preferred, f"{e}: elects a replica that is not the first of {replicas}"
    # a cordon (the operator's, recorded in the request, or Kafka's) stops new replicas, never moves old ones
    cordoned = set(plan.request.get("cordoned_brokers", ())) | {b for b, x in snap.brokers.items() if x.cordoned}
    released = set(plan.request.get("brokers", ())) | set(plan.request.get("exclude_brokers", ()))
    for m in plan.reassignments:
        assert not cordoned.intersection(m.added), f"{m.topic}-{m.partition}: new replica on a cordoned broker"
        if plan.kind in ("decommission", "replica_balance"):
            kept = (cordoned - released).intersection(m.removed)
            assert not kept, f"{m.topic}-{m.partition}: cordoned broker(s) {kept} lost a replica"
    # the files are valid JSON and name exactly the touched partitions
    files = json.loads(json.dumps([plan.to_reassignment_json(), plan.rollback_json(), plan.election_json()]))
    assert [(p["topic"], p["partition"]) for p in files[0]["partitions"]] == [
        (m.topic, m.partition) for m in plan.reassignments
    ]
