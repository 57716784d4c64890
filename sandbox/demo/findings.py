"""`make demo`: the snapshot pipeline end to end on two sandbox clusters, a ZooKeeper one and then a
KRaft one, into one lake.

The ZooKeeper cluster `default` first. Starts ZooKeeper + 3 Kafka 3.9 brokers, creates topics (one
with replication factor 1, `tp_re_02`), produces data, and stages consumer groups with real Java consumers: `analytics`
(3 members, range assignor over 3 topics x 4 partitions: the textbook skew), `audit` (a consumer
slower than its producer) and `billing` (read part of a topic, committed, left). A few group
collections follow while data keeps coming. Then it snapshots the healthy cluster, stops one
broker so ISRs shrink, runs the `kafka_metadata_snapshot` DAG once with `airflow dags test`,
prints what the lake now holds, runs the `kafka_health_analysis` DAG (both Spark jobs) and prints
its findings (ISRs, leaders, lag statuses, time lag, assignor skew and the what-if); then
restarts the broker, snapshots and analyses again (ISR expansion, leaders fixable by a preferred
election), prints a dry-run plan for each remediation action (planners called directly, nothing
written), and tears everything down. Then, with that sandbox stopped (both at once would crowd a
2-core machine), the KRaft cluster `sandbox-kraft` (`sandbox.demo.kraft`): Kafka 4.4, a fenced
broker and a killed active controller, the same two DAGs, findings, alerts and a dry-run plan.
`make demo-remediate` runs the remediation DAGs and applies two plans.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from kafka.admin import KafkaAdminClient, NewTopic
from kafka.consumer import KafkaConsumer
from kafka.producer import KafkaProducer

from kafka_ops.lake.open import lake_at
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.registry import plan_for
from kafka_ops.planning.request import ELECTION_FORM, REASSIGNMENT_FORM, ParamError, RequestForm, parse_request
from kafka_ops.planning.review import render_plan
from kafka_ops.remediation import stored_plan
from kafka_ops.remediation.pacing import pacing_of
from kafka_ops.report.digest import render_findings
from kafka_ops.settings import Settings
from kafka_ops.snapshot.publish import groups_to_lake, snapshot_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from sandbox import SandboxCluster, var_dir
from sandbox.demo.common import (
    SPARK_LOCAL,
    airflow_dags_test,
    close_producer,
    print_alerts,
    print_lake,
    print_pointers,
    produce,
    say,
)
from sandbox.demo.kraft import KRAFT_CLUSTER, kraft_demo
from sandbox.java_consumer import JavaConsumer

TOPICS = [
    NewTopic("tp_re_02", 3, 1),
    NewTopic("orders", 6, 3, topic_configs={"min.insync.replicas": "2"}),
    NewTopic("payments", 4, 3, topic_configs={"min.insync.replicas": "2"}),
    NewTopic("clicks", 8, 2),
]
GROUP_TOPICS = [NewTopic(name, 4, 2) for name in ("views", "carts", "checkouts")] + [NewTopic("ledger", 1, 2)]
STOPPED_BROKER = 2
GROUP_COLLECTIONS = 4


def stage_groups(cluster: SandboxCluster, stack: ExitStack, lake: Lake) -> None:
    """Real Java consumers: a skewed range group and a slow one; then a few group collections
    while data keeps coming, so the lag rules have a window to judge."""
    bootstrap = cluster.bootstrap_servers
    topics = ["views", "carts", "checkouts"]
    analytics = [
        stack.enter_context(JavaConsumer(bootstrap, "analytics", topics, "range", client_id=f"analytics-{i}"))
        for i in range(3)
    ]
    audit = stack.enter_context(JavaConsumer(bootstrap, "audit", ["ledger"], "range", client_id="audit", rate=40))
    for consumer in [*analytics, audit]:
        consumer.wait_until(lambda c: c.assignment is not None, 90, "its first assignment")
    held = ", ".join(f"{c.name} holds {len(c.assignment or ())}" for c in analytics)
    print(f"consumer group analytics (range, 3 members, 3 topics x 4 partitions): {held}")
    stop = threading.Event()
    ledger = threading.Thread(target=produce_steadily, args=(bootstrap, "ledger", 80, stop), daemon=True)
    ledger.start()
    stack.callback(ledger.join, 10)
    stack.callback(stop.set)
    print("consumer group audit: one consumer reading ledger at 40 messages/s; ledger gets 80/s")
    target = KafkaTarget(bootstrap)
    for i in range(GROUP_COLLECTIONS):
        produce(bootstrap, 300, topics)
        time.sleep(3)
        _, info = groups_to_lake("default", target, lake)
        print(f"group collection {i + 1}/{GROUP_COLLECTIONS}: {info['groups']} groups, total lag {info['total_lag']}")


def produce_steadily(bootstrap: str, topic: str, per_second: int, stop: threading.Event) -> None:
    """A producer that keeps `topic` growing until `stop` is set."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    try:
        while not stop.wait(1.0):
            for i in range(per_second):
                producer.send(topic, value=f"entry {i}".encode())
    finally:
        close_producer(producer, 5)


def consume_some(bootstrap: str, group: str, topic: str, messages: int) -> None:
    """A consumer group that reads part of a topic, commits, and leaves (an Empty group with lag)."""
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
        enable_auto_commit=False, max_poll_records=100,
    )  # fmt: skip
    try:
        seen = 0
        while seen < messages:
            seen += sum(len(batch) for batch in consumer.poll(timeout_ms=1000).values())
        consumer.commit()
    finally:
        consumer.close()


DRY_RUNS: list[tuple[RequestForm, dict[str, Any]]] = [
    (ELECTION_FORM, {"action": "preferred_election"}),
    (REASSIGNMENT_FORM, {"action": "replication_factor", "topics": ["tp_re_02"], "replication_factor": 2}),
    (REASSIGNMENT_FORM, {"action": "decommission", "brokers": [3]}),
    (REASSIGNMENT_FORM, {"action": "replica_balance"}),
]


def show_dry_run_plans(cluster: SandboxCluster) -> None:
    """A dry-run plan for each remediation action, from the same Params the DAGs' forms take. To keep
    the demo fast the planners are called directly on a fresh snapshot, without a DAG run: the DAGs'
    `plan` task also validates the snapshot first and saves the plan to the lake for review."""
    snap = ZooKeeperCollector("default", ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot)).collect()
    for form, conf in DRY_RUNS:
        request = parse_request({**form.defaults(), "cluster": "default", **conf}, Settings(), form, stored=stored_plan)
        print(f"\n{form.dag_id} {json.dumps(conf)}")
        try:
            plan = plan_for(request, snap)
        except ParamError as e:
            print(f"  refused, as the DAG would refuse it: {e}")
            if request.action != "decommission":
                continue
            # RF-3 topics cannot leave a 3-broker cluster: show what would move for the others
            print("  restricted to the topics with fewer than 3 replicas:")
            plan = plan_for(request, _topics_below_rf(snap, 3))
        print(render_plan(plan, request, pacing_of(plan, request), partitions=False, validated=False))


def _topics_below_rf(snap: ClusterSnapshot, rf: int) -> ClusterSnapshot:
    kept = {t: a for t, a in snap.topics.items() if max(map(len, a.partitions.values()), default=0) < rf}
    return replace(
        snap,
        topics=kept,
        partition_states={tp: s for tp, s in snap.partition_states.items() if tp[0] in kept},
        reassignment_requests=[r for r in snap.reassignment_requests if r.topic in kept],
    )


def zookeeper_connections(cluster: SandboxCluster) -> dict[str, dict[str, Any]]:
    """The Airflow connections of the cluster `default` (the settings' defaults) on the sandbox."""
    return {
        "zookeeper_default": {"conn_type": "zookeeper", "host": cluster.zookeeper_hosts,
                              "extra": {"chroot": cluster.chroot}},
        "spark_default": SPARK_LOCAL,
        "kafka_default": {"conn_type": "kafka", "host": cluster.bootstrap_servers},
    }  # fmt: skip


def zookeeper_demo(lake_root: str) -> None:
    """The ZooKeeper cluster `default`: groups, a stopped broker, the DAGs, findings, alerts, plans."""
    say("starting the sandbox: ZooKeeper + 3 Kafka 3.9 brokers (rack-a, rack-b, rack-c)")
    with SandboxCluster() as cluster, ExitStack() as consumers:
        connections = zookeeper_connections(cluster)
        print(f"zookeeper {cluster.zookeeper_connect}   bootstrap {cluster.bootstrap_servers}")
        say("creating topics and producing data")
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        admin.create_topics(TOPICS + GROUP_TOPICS)
        admin.close()
        produce(cluster.bootstrap_servers, 2000, [t.name for t in TOPICS])
        print(", ".join(f"{t.name} ({t.num_partitions}x RF{t.replication_factor})" for t in TOPICS + GROUP_TOPICS))
        consume_some(cluster.bootstrap_servers, "billing", "orders", 1200)
        print("consumer group billing read part of orders, committed and left")
        say("consumer groups: real Java consumers (kafka-clients 3.9), collected a few times")
        stage_groups(cluster, consumers, lake_at(lake_root))
        say("a first snapshot of the healthy cluster")
        snapshot_to_lake("default", ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot), lake_at(lake_root))
        say(f"stopping broker {STOPPED_BROKER}: its replicas leave the ISRs, its leaderships move")
        cluster.stop_broker(STOPPED_BROKER)
        started = time.monotonic()
        cluster.wait_for(lambda s: STOPPED_BROKER not in s.brokers and bool(s.under_replicated()), 60, "ISR shrink")
        print(f"ISRs shrank after {time.monotonic() - started:.1f}s")
        say("running the snapshot DAG once: airflow dags test kafka_metadata_snapshot")
        airflow_dags_test("kafka_metadata_snapshot", lake_root, connections)
        say("what the lake now holds")
        print_lake(lake_at(lake_root), "default")
        say("running the analysis DAG (Spark, local[2]): airflow dags test kafka_health_analysis")
        airflow_dags_test("kafka_health_analysis", lake_root, connections)
        print(render_findings(lake_at(lake_root), "default"))
        say("what the on-call engineer received (the default log sink; Slack, PagerDuty, e-mail by connection)")
        print_alerts(Path(lake_root), "default")
        say(f"restarting broker {STOPPED_BROKER}: ISRs expand, but its leaderships stay where they moved")
        cluster.start_broker(STOPPED_BROKER)
        cluster.wait_healthy(120)
        airflow_dags_test("kafka_metadata_snapshot", lake_root, connections)
        airflow_dags_test("kafka_health_analysis", lake_root, connections)
        print(render_findings(lake_at(lake_root), "default"))
        say("alerts after the broker came back: the incident it caused is resolved")
        print_alerts(Path(lake_root), "default", events=("resolve",))
        say("dry-run remediation plans, one per action (nothing is written; make demo-remediate applies two)")
        show_dry_run_plans(cluster)
        say("tearing down the consumers and the sandbox")
    print("done: no Kafka or ZooKeeper process left running")


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("kafka").setLevel(logging.CRITICAL)  # connection retries while brokers start
    # a fresh lake each run: history from an earlier sandbox would mix two different clusters
    lake_root = str(var_dir() / "demo" / "lake")
    shutil.rmtree(lake_root, ignore_errors=True)
    zookeeper_demo(lake_root)
    # one cluster after the other: both at once would crowd a 2-core machine
    kraft_demo(lake_root)
    say("open these in a browser")
    for cluster in ("default", KRAFT_CLUSTER):
        print_pointers(Path(lake_root), cluster)


if __name__ == "__main__":
    main()
