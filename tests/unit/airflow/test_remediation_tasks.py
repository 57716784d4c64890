"""The remediation DAGs' task bodies without a cluster: routing, refusals before any connection, the
planner each action calls, and the summary an operator reviews. The sandbox runs are in
tests/dags/test_remediation_dags.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from kafka_ops.airflow import remediation_tasks as tasks
from kafka_ops.airflow.remediation_params import form_params
from kafka_ops.errors import PlanError
from kafka_ops.lake.open import lake_of
from kafka_ops.model.cluster import LogDir, ReplicaSize
from kafka_ops.planning import plan_replication_factor
from kafka_ops.planning.registry import plan_for
from kafka_ops.planning.request import ELECTION_FORM, MIN_THROTTLE, REASSIGNMENT_FORM, ParamError, parse_request
from kafka_ops.planning.review import lower_bound, render_plan
from kafka_ops.remediation import read_audit, save_plan
from kafka_ops.remediation.pacing import budget_throttle, pacing_of
from kafka_ops.remediation.store import stored_plan
from kafka_ops.settings import ClusterConfig, Settings
from tests.unit.planning.builders import cluster

RACKS = {1: "a", 2: "b", 3: "c"}
SNAP = cluster(RACKS, {"orders.eu": {0: (1,), 1: (2,)}, "orders.us": {0: (3,)}, "__orders.internal": {0: (1,)}})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(lake_root=str(tmp_path / "lake"), clusters=(ClusterConfig("c1"),))


def params(**overrides: Any) -> dict[str, Any]:
    base = {name: p.value for name, p in form_params(REASSIGNMENT_FORM).items()}
    return {**base, "cluster": "c1", "topics": ["orders.eu"], "replication_factor": 2, **overrides}


def test_validate_params_routes_the_run(settings: Settings) -> None:
    assert tasks.validate_params(params(), REASSIGNMENT_FORM, settings) == "plan"
    with pytest.raises(AirflowFailException, match=r"^Param 'replication_factor': must be at least 1, got 0$"):
        tasks.validate_params(params(replication_factor=0), REASSIGNMENT_FORM, settings)


def test_a_dry_run_never_reaches_the_executor(settings: Settings) -> None:
    with pytest.raises(AirflowSkipException, match="dry run: nothing is executed"):
        tasks.execute(params(), REASSIGNMENT_FORM, actor="alice", run_id="r1", settings=settings)


def test_writes_disabled_is_refused_before_any_connection(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Airflow connection exists here: the refusal comes before one is even looked up."""
    for name in ("AIRFLOW_CONN_ZOOKEEPER_DEFAULT", "AIRFLOW_CONN_KAFKA_DEFAULT"):
        monkeypatch.delenv(name, raising=False)
    lake = lake_of(settings)
    plan = plan_replication_factor(SNAP, ["orders.eu"], 2)
    save_plan(lake, plan, created_by="alice")
    run = params(dry_run=False, plan_id=plan.plan_id)

    with pytest.raises(AirflowFailException) as caught:
        tasks.execute(run, REASSIGNMENT_FORM, actor="bob", run_id="r2", settings=settings)

    assert str(caught.value) == (
        f"RemediationRefused: plan {plan.plan_id}: refused (writes enabled): writes are disabled for cluster 'c1' "
        "(dry-run): set writes_enabled = true for it in the kafka-ops settings to let the executor write"
    )
    (row,) = read_audit(lake, "c1", plan.plan_id)
    assert (row["action"], row["outcome"], row["actor"], row["run_id"]) == ("refuse", "refused", "bob", "r2")


def test_the_actor_is_the_triggering_user() -> None:
    assert tasks.actor_of({"dag_run": SimpleNamespace(triggering_user_name="alice", dag_id="d")}) == "alice"
    assert tasks.actor_of({"dag_run": SimpleNamespace(triggering_user_name=None, dag_id="d")}) == "airflow:d"


@pytest.mark.parametrize(
    ("overrides", "kind", "topics"),
    [
        ({"topics": [], "topic_pattern": r"orders\..*"}, "replication_factor", ["orders.eu", "orders.us"]),
        ({"topics": ["orders.us"]}, "replication_factor", ["orders.us"]),
        ({"action": "decommission", "topics": [], "replication_factor": None, "brokers": [3]}, "decommission", None),
        ({"action": "replica_balance", "topics": [], "replication_factor": None}, "replica_balance", None),
    ],
)
def test_each_action_runs_its_planner(
    settings: Settings, overrides: dict[str, Any], kind: str, topics: list[str] | None
) -> None:
    request = parse_request(params(**overrides), settings, REASSIGNMENT_FORM, stored=stored_plan)
    plan = plan_for(request, SNAP)
    assert plan.kind == kind
    if topics is not None:
        assert plan.request["topics"] == topics  # a pattern never matches internal topics


def test_election_actions(settings: Settings) -> None:
    base = {name: p.value for name, p in form_params(ELECTION_FORM).items()}
    for action in ELECTION_FORM.actions:
        request = parse_request(
            {**base, "cluster": "c1", "action": action}, settings, ELECTION_FORM, stored=stored_plan
        )
        assert plan_for(request, SNAP).kind == action


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"replication_factor": 4}, "Param 'replication_factor': 4 is larger than the 3 live (registered) brokers"),
        ({"topics": ["missing"]}, "Param 'topics': unknown topic(s) 'missing': not in snapshot s1"),
        ({"topics": [], "topic_pattern": "nothing.*"}, "Param 'topic_pattern': 'nothing.*' matches no topic in"),
        ({"action": "decommission", "topics": [], "replication_factor": None, "brokers": [9]},
         "Param 'brokers': broker(s) [9] are neither registered nor holding any replica"),
        ({"action": "replica_balance", "topics": [], "replication_factor": None, "brokers": [1, 2, 3]},
         "Param 'brokers': excludes every registered broker"),
    ],
)  # fmt: skip
def test_a_request_the_snapshot_refuses_names_the_param(
    settings: Settings, overrides: dict[str, Any], message: str
) -> None:
    request = parse_request(params(**overrides), settings, REASSIGNMENT_FORM, stored=stored_plan)
    with pytest.raises(ParamError) as caught:
        plan_for(request, SNAP)
    assert str(caught.value).startswith(message)


def test_the_summary_an_operator_reviews(settings: Settings) -> None:
    request = parse_request(params(batch_size=1), settings, REASSIGNMENT_FORM, stored=stored_plan)
    plan = plan_for(request, SNAP)
    files = {"reassignment.json": "/lake/r.json", "rollback.json": "/lake/b.json"}
    text = render_plan(plan, request, pacing_of(plan, request), files=files)
    lines = text.splitlines()
    assert lines[0] == f"plan {plan.plan_id}: replication_factor on cluster c1"
    assert "2 partition(s), 2 replica move(s) (lower bound 2), 2 batch(es) of at most 1 partitions, throttle " \
           "50000000 B/s" in text  # fmt: skip
    assert "    orders.eu-0: [1] -> [1, " in text
    assert "  per broker (before -> after)  replicas        leaders         preferred" in lines
    assert "    broker 3 (c)                1 -> 3          1 -> 1          1 -> 1" in lines
    assert "    rollback.json      /lake/b.json" in text
    assert lines[-1].endswith(f"dry_run = false and plan_id = {plan.plan_id}")
    assert lower_bound(plan) == 2
    short = render_plan(plan, request, pacing_of(plan, request), partitions=False, validated=False).splitlines()
    assert "NOT validated" in short[1]
    assert not [line for line in short if "orders.eu-0" in line or "rollback.json" in line or "next" in line]
    # a broker label longer than the column widens it: its numbers never run into it
    gone = replace(plan, brokers=(replace(plan.brokers[0], broker_id=3, rack=None, registered=False),))
    (row,) = [
        line
        for line in render_plan(gone, request, pacing_of(gone, request)).splitlines()
        if line.startswith("    broker 3")
    ]
    assert row.startswith("    broker 3 (no rack, NOT registered)  ")


def test_the_clusters_cordons_reach_the_planners(tmp_path: Path) -> None:
    """Broker 3 is cordoned in the settings: orders.eu's new replicas avoid it, the plan records it and
    the review marks it; a plan only a cordon blocks names the setting, not a Param."""
    settings = Settings(lake_root=str(tmp_path / "lake"), clusters=(ClusterConfig("c1", cordoned_brokers=(3,)),))
    request = parse_request(params(), settings, REASSIGNMENT_FORM, stored=stored_plan)
    plan = plan_for(request, SNAP)
    assert [m.target for m in plan.reassignments] == [(1, 2), (2, 1)]
    assert plan.request["cordoned_brokers"] == [3]
    assert "    broker 3 (c, cordoned)      1 -> 1          1 -> 1          1 -> 1" in render_plan(
        plan, request, pacing_of(plan, request)
    )
    decommission = {"action": "decommission", "topics": [], "replication_factor": None, "brokers": [3]}
    assert (
        plan_for(parse_request(params(**decommission), settings, REASSIGNMENT_FORM, stored=stored_plan), SNAP).moves
        == 1
    )

    settings = Settings(lake_root=settings.lake_root, clusters=(ClusterConfig("c1", cordoned_brokers=(1, 2)),))
    with pytest.raises(PlanError) as caught:
        plan_for(parse_request(params(topics=["orders.us"]), settings, REASSIGNMENT_FORM, stored=stored_plan), SNAP)
    assert not isinstance(caught.value, ParamError) and caught.value.field == "cordoned_brokers"
    assert str(caught.value) == (
        "cordoned_brokers: orders.us-0 holds [3] and needs another replica, but every other registered broker is "
        "cordoned: 1 (setting cordoned_brokers), 2 (setting cordoned_brokers); lift a cordon or ask for a lower "
        "replication factor (cluster 'c1')"
    )


def test_the_log_dir_balance_through_the_form(settings: Settings) -> None:
    jbod = cluster(RACKS, {"big": {0: (1,)}, "mid": {0: (1,)}})
    jbod.log_dirs = [LogDir(1, "/a", None, 10**9, 10**9), LogDir(1, "/b", None, 10**9, 10**9)]
    jbod.replica_sizes = [ReplicaSize("big", 0, 1, "/a", 40_000_000), ReplicaSize("mid", 0, 1, "/a", 30_000_000)]
    form = params(action="log_dir_balance", topics=[], replication_factor=None, brokers=[1], batch_size=1)
    request = parse_request(form, settings, REASSIGNMENT_FORM, stored=stored_plan)
    plan = plan_for(request, jbod)
    assert plan.kind == "log_dir_balance" and plan.request["brokers"] == [1]
    assert [(d.topic, d.target_dir) for d in plan.dir_moves] == [("mid", "/b")]  # big would overshoot the band
    text = render_plan(plan, request, pacing_of(plan, request))
    assert "  log dir moves    1 replica(s), 30,000,000 bytes, 1 batch(es) of at most 1, throttle 50000000 B/s" in text
    assert "    mid-0 @ 1: /a -> /b (30,000,000 B)" in text
    budget = budget_throttle(replace(request, time_budget_minutes=1.0), plan)
    assert budget is not None and budget.rate == MIN_THROTTLE  # 30 MB in a minute: below 1 MB/s
    with pytest.raises(ParamError, match=r"^Param 'topics': is not used by action log_dir_balance"):
        parse_request({**form, "topics": ["big"]}, settings, REASSIGNMENT_FORM, stored=stored_plan)
    with pytest.raises(ParamError, match=r"^Param 'brokers': broker\(s\) \[7\] reported no log dir"):
        plan_for(parse_request({**form, "brokers": [7]}, settings, REASSIGNMENT_FORM, stored=stored_plan), jbod)
