"""Real Java consumer groups on the sandbox: what the collector records is what they hold."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafka_ops.sandbox import SandboxCluster
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
