"""The KRaft half of `make demo`: a Kafka 4.4 cluster (3 controllers + 3 brokers, no ZooKeeper) in
the same lake as the ZooKeeper sandbox, under its own name `sandbox-kraft`.

Creates `kr_single` (replication factor 1, one partition on each broker) and `kr_orders` (RF 3,
min.insync.replicas 2), produces a little data and snapshots the healthy cluster through the KRaft
source (Admin API + controller quorum). Then two KRaft failures: broker 3 stops, so the controller
fences it, `kr_orders`' ISRs shrink to min ISR and `kr_single-2` goes offline; and the active
controller is killed, so the quorum elects another leader. The `kafka_metadata_snapshot` and
`kafka_health_analysis` DAGs run through `airflow dags test` as for the ZooKeeper cluster, with a
settings file naming this cluster (`metadata_source = "kraft"`) and its Airflow connection; the
findings (fenced broker, under-min-ISR and offline partitions, the controller failover, the quorum's
missing voter) and alerts are printed with the same renderers, then a dry-run plan raising
`kr_single` to RF 2 (planner called directly, nothing written). Every JVM is stopped on the way out.
"""

from __future__ import annotations

import time
from pathlib import Path

from kafka.admin import NewTopic

from kafka_ops.lake.open import lake_at
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.registry import plan_for
from kafka_ops.planning.request import REASSIGNMENT_FORM, ParamError, parse_request
from kafka_ops.planning.review import render_plan
from kafka_ops.remediation import stored_plan
from kafka_ops.remediation.pacing import pacing_of
from kafka_ops.report.digest import render_findings
from kafka_ops.settings import Settings, load_settings
from kafka_ops.snapshot.publish import snapshot_to_lake
from kafka_ops.snapshot.tables import render_summary
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from sandbox import KRaftSandbox
from sandbox.demo.common import SPARK_LOCAL, airflow_dags_test, print_alerts, print_lake, produce, say

KRAFT_CLUSTER = "sandbox-kraft"
KAFKA_CONN_ID = "kafka_sandbox_kraft"
STOPPED_BROKER = 3
# explicit assignments, so the RF-1 partition on the stopped broker is always kr_single-2
KRAFT_TOPICS = [
    NewTopic("kr_single", replica_assignments={p: [p + 1] for p in range(3)}),
    NewTopic(
        "kr_orders",
        replica_assignments={p: [1 + (p + i) % 3 for i in range(3)] for p in range(6)},
        topic_configs={"min.insync.replicas": "2"},
    ),
]
SETTINGS = f"""\
# written by `make demo`: the KRaft sandbox, read through the Admin API and its controller quorum
[[clusters]]
name = "{KRAFT_CLUSTER}"
metadata_source = "kraft"
kafka_conn_id = "{KAFKA_CONN_ID}"
"""


def running_bootstrap(cluster: KRaftSandbox) -> str:
    return ",".join(f"127.0.0.1:{cluster.broker_ports[b]}" for b in cluster.broker_ids() if cluster.broker_running(b))


def collect(cluster: KRaftSandbox) -> ClusterSnapshot:
    """A snapshot through the running brokers (not published): what the waits below poll."""
    return KRaftCollector(KRAFT_CLUSTER, KafkaTarget(running_bootstrap(cluster))).collect()


def in_sync(cluster: KRaftSandbox) -> bool:
    snap = collect(cluster)
    return all(
        (t.name, p) in snap.partition_states and len(snap.partition_states[(t.name, p)].isr) == len(replicas)
        for t in KRAFT_TOPICS
        for p, replicas in t.replica_assignments.items()
    )


def fenced_and_shrunk(cluster: KRaftSandbox) -> bool:
    snap = collect(cluster)
    return STOPPED_BROKER in snap.fenced_brokers and bool(snap.under_replicated())


def print_quorum(lake: Lake) -> None:
    """What only a KRaft snapshot holds: fenced brokers and the metadata quorum."""
    sid = lake.latest_snapshot_id(KRAFT_CLUSTER)
    if sid is None:
        raise SystemExit(f"the lake at {lake.root} has no snapshot of {KRAFT_CLUSTER!r}")
    fenced = lake.read("fenced_brokers", KRAFT_CLUSTER, [sid]).column("broker_id").to_pylist()
    quorum = lake.read("quorum", KRAFT_CLUSTER, [sid]).to_pylist()
    voters = sorted(r["replica_id"] for r in quorum if r["role"] == "voter")
    leader = next((r for r in quorum if r["is_leader"]), None)
    print(f"  fenced brokers       {fenced}")
    if leader is not None:
        print(f"  quorum               leader controller {leader['replica_id']}, epoch {leader['leader_epoch']}, "
              f"voters {voters}")  # fmt: skip


def show_dry_run_plan(cluster: KRaftSandbox, settings: Settings) -> None:
    """The remedy for a partition one broker can take offline: kr_single to RF 2 (planned, not applied)."""
    conf = {"action": "replication_factor", "topics": ["kr_single"], "replication_factor": 2}
    params = {**REASSIGNMENT_FORM.defaults(), "cluster": KRAFT_CLUSTER, **conf}
    request = parse_request(params, settings, REASSIGNMENT_FORM, stored=stored_plan)
    print(f"{REASSIGNMENT_FORM.dag_id} {conf}")
    try:
        plan = plan_for(request, collect(cluster))
    except ParamError as e:
        print(f"  refused, as the DAG would refuse it: {e}")
        return
    print(render_plan(plan, request, pacing_of(plan, request), partitions=True, validated=False))


def kraft_demo(lake_root: str, messages: int = 1000) -> None:
    """The KRaft cluster from start to teardown, in `lake_root` beside the ZooKeeper one; its
    settings file goes next to the lake."""
    lake = lake_at(lake_root)
    settings_file = Path(lake_root).parent / "kraft-settings.toml"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(SETTINGS)
    settings = Settings(lake_root=lake_root, clusters=load_settings(settings_file).clusters)
    say(f"the KRaft cluster {KRAFT_CLUSTER}: 3 controllers + 3 Kafka 4.4 brokers (racks a, b, c), no ZooKeeper")
    with KRaftSandbox() as cluster:
        bootstrap = cluster.bootstrap_servers
        connections = {KAFKA_CONN_ID: {"conn_type": "kafka", "host": bootstrap}, "spark_default": SPARK_LOCAL}
        print(f"controllers {cluster.quorum_voters}   bootstrap {bootstrap}")
        print(f"settings {settings_file} (metadata_source = kraft, connection {KAFKA_CONN_ID})")
        say("creating topics and producing data on the KRaft cluster")
        with cluster.admin() as admin:
            admin.create_topics(KRAFT_TOPICS)
        cluster.wait_for(lambda: in_sync(cluster), 60, "the demo topics fully in sync")
        produce(bootstrap, messages, [t.name for t in KRAFT_TOPICS])
        print("kr_single (3x RF1, one partition per broker), kr_orders (6x RF3, min.insync.replicas 2)")
        say("a first snapshot of the healthy KRaft cluster (Admin API + controller quorum)")
        _, info = snapshot_to_lake(KRAFT_CLUSTER, KafkaTarget(bootstrap), lake)
        print(render_summary(info))
        say(f"stopping broker {STOPPED_BROKER}: the controller fences it, ISRs shrink, kr_single-2 goes offline")
        cluster.stop_broker(STOPPED_BROKER)
        started = time.monotonic()
        cluster.wait_for(lambda: fenced_and_shrunk(cluster), 60, f"broker {STOPPED_BROKER} fenced and ISRs shrunk")
        print(f"broker {STOPPED_BROKER} fenced and ISRs shrunk after {time.monotonic() - started:.1f}s")
        leader = cluster.active_controller_id()
        if leader is None:
            raise SystemExit(f"the KRaft sandbox's quorum has no leader; logs under {cluster.root}")
        say(f"killing the active controller {leader} (kill -9): the quorum elects another leader")
        cluster.kill_controller(leader)
        started = time.monotonic()
        cluster.wait_for(lambda: cluster.active_controller_id() not in (None, leader), 60, "a new quorum leader")
        print(f"controller {cluster.active_controller_id()} leads the quorum after {time.monotonic() - started:.1f}s")
        say("running the snapshot DAG on the KRaft cluster: airflow dags test kafka_metadata_snapshot")
        airflow_dags_test("kafka_metadata_snapshot", lake_root, connections, settings_file, "demo-kraft")
        say("what the lake now holds for the KRaft cluster")
        print_lake(lake, KRAFT_CLUSTER)
        print_quorum(lake)
        say("running the analysis DAG on the KRaft cluster: airflow dags test kafka_health_analysis")
        airflow_dags_test("kafka_health_analysis", lake_root, connections, settings_file, "demo-kraft")
        say(f"findings for the KRaft cluster {KRAFT_CLUSTER} (Kafka 4.4: a fenced broker, a quorum failover)")
        print(render_findings(lake, KRAFT_CLUSTER))
        say("what the on-call engineer received for the KRaft cluster")
        print_alerts(Path(lake_root), KRAFT_CLUSTER)
        say("a dry-run plan on the KRaft cluster (nothing is written): kr_single to replication factor 2")
        show_dry_run_plan(cluster, settings)
        say("tearing down the KRaft sandbox")
    print("done: no KRaft controller or broker left running")
