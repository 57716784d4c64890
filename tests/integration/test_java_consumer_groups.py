"""Real Java consumer groups on the sandbox: what the collector records is what they hold."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafka_ops.assignors import AssignorBridge
from kafka_ops.assignors.whatif import Verdict, group_today, layout_of, what_if
from kafka_ops.model.groups import ConsumerGroup
from sandbox import SandboxCluster
from tests.integration.java_groups import collect, java_group, make_topics

pytestmark = pytest.mark.integration


@pytest.fixture
def run_id() -> str:
    return uuid.uuid4().hex[:8]


def test_range_textbook_skew_is_recorded_as_held(healthy_sandbox: SandboxCluster, run_id: str, tmp_path: Path) -> None:
    topics = [f"jr-{run_id}-{t}" for t in "abc"]
    make_topics(healthy_sandbox, dict.fromkeys(topics, 4))
    group = f"jr-{run_id}-range"
    with java_group(healthy_sandbox, group, [topics] * 3, "range", tmp_path) as consumers:
        snap = collect(healthy_sandbox, group)
        held = {c.name: c.assignment for c in consumers}
    (g,) = snap.groups
    assert (g.state, g.protocol_type, g.assignor) == ("Stable", "consumer", "range")
    assert {m.client_id: m.assignment for m in g.members} == held
    # 3 topics x 4 partitions over 3 members: the first member gets the extra partition of every topic
    assert sorted(len(a) for a in held.values()) == [3, 3, 6]
    assert all(m.subscription for m in g.members)  # the raw consumer-protocol metadata is kept


def test_round_robin_with_unequal_subscriptions(healthy_sandbox: SandboxCluster, run_id: str, tmp_path: Path) -> None:
    a, b = f"jrr-{run_id}-a", f"jrr-{run_id}-b"
    make_topics(healthy_sandbox, {a: 3, b: 3})
    group = f"jrr-{run_id}-rr"
    with java_group(healthy_sandbox, group, [[a, b], [a], [b]], "roundrobin", tmp_path) as consumers:
        snap = collect(healthy_sandbox, group)
        held = {c.name: c.assignment for c in consumers}
    (g,) = snap.groups
    assert g.assignor == "roundrobin"
    assert {m.client_id: m.assignment for m in g.members} == held
    assert not {tp for tp in held[f"{group}-c1"] if tp[0] == b} and not {tp for tp in held[f"{group}-c2"] if tp[0] == a}
    assert sorted(tp for part in held.values() for tp in part) == sorted(
        [(a, p) for p in range(3)] + [(b, p) for p in range(3)]
    )


def predicted(sandbox: SandboxCluster, group: ConsumerGroup) -> Verdict:
    """Kafka's own assignor, fed what the members really sent, on the sandbox's real layout."""
    with AssignorBridge() as bridge:
        _, (verdict,) = what_if(bridge, layout_of(sandbox.snapshot()), [group_today(group)], {})
    return verdict


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_what_if_predicts_the_real_assignment_exactly(
    healthy_sandbox: SandboxCluster, run_id: str, tmp_path: Path, assignor: str
) -> None:
    """Racks on the consumers and on the replicas: Kafka's rack-aware (KIP-881) logic is in play."""
    a, b = f"jp-{run_id}-a", f"jp-{run_id}-b"
    make_topics(healthy_sandbox, {a: 5, b: 3})
    group = f"jp-{run_id}-g"
    subscriptions = [[a, b], [a, b], [a], [b]]
    racks = ["rack-a", "rack-b", "rack-c", None]
    with java_group(healthy_sandbox, group, subscriptions, assignor, tmp_path, racks) as consumers:
        (g,) = collect(healthy_sandbox, group).groups
        held = {c.name: c.assignment for c in consumers}
    assert g.assignor == assignor and {m.client_id: m.assignment for m in g.members} == held
    verdict = predicted(healthy_sandbox, g)
    assert verdict.error is None
    assert verdict.prediction_matches is True, f"Kafka's {assignor} would move {verdict.prediction_moves} partitions"
