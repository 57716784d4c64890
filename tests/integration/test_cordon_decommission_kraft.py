"""A decommission on Kafka 4.4 cordons first (KIP-1066): on a cluster of its own (two brokers, one
controller), the plan cordons the broker it drains before the first move, drains it, verifies it holds
no replica and leaves it cordoned, and Kafka agrees (`kafka-configs --describe`, its own placement of a
new topic). A decommission that gets stuck and is cancelled lifts the cordon it set, a cordon the operator
had set before the plan is never the plan's to lift, a rollback lifts the cordon its failed plan left (even
one with nothing left to move back), and a drained broker, once stopped, is unregistered as its own step."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from airflow.exceptions import AirflowFailException
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic

from kafka_ops.airflow import remediation_tasks
from kafka_ops.cli import main as cli_main
from kafka_ops.errors import ReassignmentStuck, RemediationFailed
from kafka_ops.lake.store import Lake
from kafka_ops.planning import plan_decommission
from kafka_ops.planning.plan_rollback import plan_rollback
from kafka_ops.planning.request import REASSIGNMENT_FORM
from kafka_ops.planning.view import CORDON_LEVEL
from kafka_ops.remediation import AdminApiBackend, cancel, read_audit
from kafka_ops.remediation.live import KRaftLiveReader
from kafka_ops.remediation.store import read_progress
from kafka_ops.settings import ClusterConfig
from sandbox import KRaftSandbox
from tests.integration.kafka_data import produce
from tests.integration.kafka_tools import kafka4_tool
from tests.integration.test_kraft_remediation_sandbox import CLUSTER, FAST, base, create, run, snapshot, target

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def two_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftSandbox]:
    internal_rf = {"offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1"}
    cluster = KRaftSandbox(
        root=tmp_path_factory.mktemp("kraft-cordon"), brokers=2, controllers=1, broker_settings=internal_rf
    ).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def cordons(cluster: KRaftSandbox) -> dict[int, str | None]:
    """`kafka-configs --describe --entity-type brokers`: each broker's dynamic `cordoned.log.dirs`."""
    out = {}
    for b in cluster.broker_ids():
        described = kafka4_tool(
            "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", cluster.bootstrap_servers, "--describe",
            "--entity-type", "brokers", "--entity-name", str(b),
        )  # fmt: skip
        found = re.search(r"\bcordoned\.log\.dirs=([^\s,]*)", described)
        out[b] = found.group(1) if found else None
    return out


def holding(cluster: KRaftSandbox, broker: int) -> list[tuple[str, int]]:
    return snapshot(cluster).held_by(broker)


def set_cordon(cluster: KRaftSandbox, broker: int, value: str | None) -> None:
    op = value if value is not None else (AlterConfigOp.DELETE, None)
    with cluster.admin() as admin:
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, str(broker), {"cordoned.log.dirs": op})],
                            incremental=True)  # fmt: skip
    cluster.wait_for(lambda: snapshot(cluster).brokers[broker].cordoned is (value is not None), 30, "cordon")


def test_a_decommission_cordons_drains_verifies_and_keeps_the_cordon(two_brokers: KRaftSandbox, lake: Lake) -> None:
    cluster = two_brokers
    create(cluster, "cordon_a", {0: [1], 1: [2], 2: [2], 3: [1]})
    snap = base(cluster, lake)
    assert (snap.metadata_version or 0) >= CORDON_LEVEL
    plan = plan_decommission(snap, [2])
    assert plan.request["cordon_first"] == [2] and plan.moves == 2

    report = run(cluster, plan, lake)

    assert report.status == "done"
    assert holding(cluster, 2) == []
    assert cordons(cluster) == {1: None, 2: "*"}
    assert snapshot(cluster).brokers[2].cordoned is True
    with cluster.admin() as admin:  # Kafka's own placement leaves the cordoned broker out
        admin.create_topics([NewTopic("cordon_new", 4, 1)])
    cluster.wait_for(lambda: len(snapshot(cluster).topics["cordon_new"].partitions) == 4, 30, "topic created")
    assert holding(cluster, 2) == []
    steps = [(r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, plan.plan_id)]
    assert steps.index(("cordon", "ok")) < steps.index(("reassign", "ok"))
    assert ("verify_drained", "ok") in steps
    assert read_progress(lake, CLUSTER, plan.plan_id).cordoned_brokers == [2]  # type: ignore[union-attr]
    set_cordon(cluster, 2, None)


def test_a_cancelled_decommission_lifts_its_cordon_and_never_the_operators(
    two_brokers: KRaftSandbox, lake: Lake
) -> None:
    cluster = two_brokers
    create(cluster, "cordon_b", {0: [2]})
    produce(cluster, "cordon_b", 200, value_bytes=10_000)  # type: ignore[arg-type]
    plan = plan_decommission(base(cluster, lake), [2])
    assert plan.request["cordon_first"] == [2]
    with pytest.raises(ReassignmentStuck):
        run(cluster, plan, lake, replace(FAST, throttle_bytes_per_s=1, stuck_after_s=3))
    assert cordons(cluster)[2] == "*"

    config = ClusterConfig(CLUSTER, writes_enabled=True, metadata_source="kraft")
    backend = AdminApiBackend(target(cluster))
    try:
        report = cancel(plan.plan_id, lake=lake, cluster_config=config, backend=backend,
                        reader=KRaftLiveReader(CLUSTER, target(cluster)), actor="pytest", poll_s=0.3)  # fmt: skip
    finally:
        backend.close()
    # the crawl is stopped (or, under load, a first fetch of the whole partition finished it): nothing in flight
    assert report.still_in_flight == [] and report.cancelled + report.at_target == ["cordon_b-0"]
    assert cordons(cluster)[2] is None
    assert read_progress(lake, CLUSTER, plan.plan_id).cordoned_brokers == []  # type: ignore[union-attr]
    assert ("uncordon", "ok") in [(r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, plan.plan_id)]

    set_cordon(cluster, 2, "*")  # the operator's own cordon: the plan neither lists nor lifts it
    try:
        assert "cordon_first" not in plan_decommission(base(cluster, lake), [2]).request
    finally:
        set_cordon(cluster, 2, None)


def test_a_rollback_lifts_the_cordon_its_failed_plan_left_then_moves_back(
    two_brokers: KRaftSandbox, lake: Lake
) -> None:
    """A decommission planned without one of the broker's topics drains the rest, then fails its check that the
    broker is empty, and leaves the broker cordoned; its rollback is not refused for that cordon, lifts it
    first, and moves the drained partitions back."""
    cluster = two_brokers
    create(cluster, "cordon_c", {0: [2], 1: [2]})
    create(cluster, "cordon_d", {0: [2]})
    snap = base(cluster, lake)
    plan = plan_decommission(replace(snap, topics={"cordon_c": snap.topics["cordon_c"]}), [2])
    with pytest.raises(RemediationFailed, match=r"cordoned brokers still hold replicas: broker 2: .*cordon_d-0"):
        run(cluster, plan, lake)
    assert cordons(cluster)[2] == "*"

    rollback = plan_rollback(base(cluster, lake), plan)
    assert rollback.request["uncordon_first"] == [2] and rollback.moves == 2
    assert run(cluster, rollback, lake).status == "done"
    assert cordons(cluster)[2] is None
    assert {p: r for p, r in snapshot(cluster).topics["cordon_c"].partitions.items()} == {0: (2,), 1: (2,)}


def test_a_rollback_with_nothing_left_to_move_back_still_lifts_the_cordon(
    two_brokers: KRaftSandbox, lake: Lake
) -> None:
    """The failed decommission's drained topic deleted since: its rollback has no move left (the partition
    is skipped), yet it runs and lifts the cordon the plan left."""
    cluster = two_brokers
    create(cluster, "cordon_g", {0: [2]})
    create(cluster, "cordon_h", {0: [2]})
    snap = base(cluster, lake)
    plan = plan_decommission(replace(snap, topics={"cordon_g": snap.topics["cordon_g"]}), [2])
    with pytest.raises(RemediationFailed, match=r"cordoned brokers still hold replicas: broker 2: .*cordon_h-0"):
        run(cluster, plan, lake)
    with cluster.admin() as admin:
        admin.delete_topics(["cordon_g"])
    cluster.wait_for(lambda: "cordon_g" not in snapshot(cluster).topics, 60, "cordon_g deleted")

    rollback = plan_rollback(base(cluster, lake), plan)
    assert rollback.moves == 0 and [s.reason for s in rollback.skipped] == ["the partition no longer exists"]
    assert rollback.request["uncordon_first"] == [2]
    assert run(cluster, rollback, lake).status == "done"
    assert cordons(cluster)[2] is None
    assert ("uncordon", "ok") in [(r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, rollback.plan_id)]


def test_a_drained_stopped_broker_is_unregistered_as_its_own_step(
    two_brokers: KRaftSandbox, lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Broker 2 decommissioned, then stopped: fenced, still registered (DescribeCluster with fenced brokers,
    KIP-1073). `kafka-ops broker unregister` refuses a serving broker and, without writes enabled, to execute;
    its plan is printed for review. The reassignment DAG's `unregister_broker` action plans the same step
    (a dry run, reviewed like any plan) and executes exactly that plan: the registration is gone."""
    cluster = two_brokers
    create(cluster, "cordon_e", {0: [2]})
    plan = plan_decommission(base(cluster, lake), [2])
    assert run(cluster, plan, lake).status == "done" and holding(cluster, 2) == []
    cluster.stop_broker(2)
    cluster.wait_for(lambda: 2 in snapshot(cluster).fenced_brokers, 60, "broker 2 fenced")
    connection = {"conn_type": "kafka", "host": target(cluster).bootstrap_servers,
                  "extra": {"request_timeout_ms": 10_000}}  # fmt: skip
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_CORDON", json.dumps(connection))

    def use_settings(writes: bool) -> None:
        settings = tmp_path / f"kafka-ops-{writes}.toml"
        settings.write_text(f'lake_root = "{lake.root}"\n[[clusters]]\nname = "{CLUSTER}"\nmetadata_source = "kraft"\n'
                            f'kafka_conn_id = "kafka_cordon"\nwrites_enabled = {str(writes).lower()}\n')  # fmt: skip
        monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))

    def cli(*args: str) -> int:
        return cli_main(["broker", "unregister", "--cluster", CLUSTER, "--bootstrap-servers",
                         target(cluster).bootstrap_servers, "--lake", str(lake.root), *args])  # fmt: skip

    use_settings(writes=False)
    assert cli("--broker", "1") == 2
    assert "broker 1 is serving (registered and not fenced): stop it first" in capsys.readouterr().err
    assert cli("--broker", "2") == 0
    assert "unregister broker 2 of cluster kraft" in capsys.readouterr().out
    assert cli("--broker", "2", "--execute") == 2
    assert "refused (writes enabled)" in capsys.readouterr().err
    assert 2 in snapshot(cluster).fenced_brokers

    use_settings(writes=True)
    params = {"cluster": CLUSTER, "action": "unregister_broker", "brokers": [2], "dry_run": True}
    with pytest.raises(AirflowFailException, match=r"Param 'brokers': broker 1 is serving"):
        remediation_tasks.plan({**params, "brokers": [1]}, REASSIGNMENT_FORM, actor="pytest")
    dry_run = remediation_tasks.plan(params, REASSIGNMENT_FORM, actor="pytest")
    assert dry_run["kind"] == "unregister_broker" and dry_run["next"].startswith("review the plan")
    assert 2 in snapshot(cluster).fenced_brokers  # a dry run writes nothing
    done = remediation_tasks.execute({**params, "dry_run": False, "plan_id": dry_run["plan_id"]}, REASSIGNMENT_FORM,
                                     actor="pytest", run_id="manual__1")  # fmt: skip
    assert (done["status"], done["broker"], done["plan_id"]) == ("done", 2, dry_run["plan_id"])
    after = snapshot(cluster)
    assert 2 not in after.fenced_brokers and 2 not in after.brokers
    steps = [(r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, dry_run["plan_id"])]
    assert steps == [("unregister", "ok"), ("verify", "ok")]
