"""The throttle from a plan's bytes and a time budget: the busiest broker's need, capped by capacity."""

from __future__ import annotations

import pytest

from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ReplicaSize
from kafka_ops.planning import plan_replica_balance
from kafka_ops.planning.load import cluster_load
from kafka_ops.planning.request import MIN_THROTTLE, RemediationRequest
from kafka_ops.planning.review import render_plan
from kafka_ops.remediation.pacing import execution_options, pacing_of
from kafka_ops.remediation.throttle_budget import throttle_for_budget
from kafka_ops.settings import ClusterConfig
from tests.unit.planning.builders import Assignment, cluster

GB = 1_000_000_000


def balanced_plan(sizes: bool = True):  # type: ignore[no-untyped-def]
    """Broker 1 holds six 6 GB partitions, brokers 2 and 3 none: 12 GB to each of them."""
    topics: Assignment = {"t": {p: (1,) for p in range(6)}}
    snap = cluster({1: None, 2: None, 3: None}, topics)
    if sizes:
        snap.replica_sizes = [ReplicaSize("t", p, 1, "/d", 6 * GB) for p in range(6)]
    return plan_replica_balance(snap, load=cluster_load(snap))


def test_the_rate_moves_the_busiest_brokers_bytes_within_the_budget() -> None:
    plan = balanced_plan()
    assert plan.estimated_bytes == 24 * GB
    throttle = throttle_for_budget(plan, 10, Capacities(), minimum=MIN_THROTTLE)
    assert throttle.busiest == 1 and throttle.rate == 24 * GB // 600  # broker 1 sends 24 GB in 600 s
    assert throttle.per_broker == {1: 40_000_000, 2: 20_000_000, 3: 20_000_000}
    assert throttle.capped == () and throttle.seconds == pytest.approx(600)


def test_a_network_capacity_caps_the_rate_and_says_the_budget_is_missed() -> None:
    caps = Capacities(BrokerCapacity(network_out_bytes_per_s=10_000_000.0))
    throttle = throttle_for_budget(balanced_plan(), 10, caps, minimum=MIN_THROTTLE)
    assert throttle.rate == 20_000_000, "broker 1 is capped at 10 MB/s: the receivers' need sets the rate"
    assert throttle.capped == (1,)
    assert throttle.seconds == pytest.approx(2400)  # 24 GB at 10 MB/s


def test_a_long_budget_never_goes_below_the_minimum_and_bad_budgets_are_refused() -> None:
    assert throttle_for_budget(balanced_plan(), 10**6, Capacities(), minimum=MIN_THROTTLE).rate == MIN_THROTTLE
    with pytest.raises(PlanError, match="time_budget_minutes: must be a number of minutes > 0"):
        throttle_for_budget(balanced_plan(), 0, Capacities(), minimum=MIN_THROTTLE)
    with pytest.raises(PlanError, match="does not know the size of 4 moved partition"):
        throttle_for_budget(balanced_plan(sizes=False), 10, Capacities(), minimum=MIN_THROTTLE)


def test_the_executor_gets_the_budget_throttle_and_the_dry_run_shows_it() -> None:
    plan = balanced_plan()
    request = RemediationRequest(ClusterConfig("c1"), "/lake", "replica_balance", False, plan.plan_id,
                                 time_budget_minutes=10)  # fmt: skip
    assert execution_options(request, plan).throttle_bytes_per_s == 40_000_000
    assert execution_options(request).throttle_bytes_per_s == request.throttle_bytes_per_s  # no plan: the Param
    text = render_plan(plan, request, pacing_of(plan, request))
    assert "throttle 40000000 B/s (time budget 10 min; busiest broker 1)" in text
    assert "broker 1        36,000,000,000 -> 12,000,000,000 bytes" in text
    assert "soft disk_spread: improved 3.6e+10 -> 0" in text
    fixed = RemediationRequest(ClusterConfig("c1"), "/lake", "replica_balance", False, plan.plan_id)
    assert execution_options(fixed, plan).throttle_bytes_per_s == fixed.throttle_bytes_per_s == 50_000_000
