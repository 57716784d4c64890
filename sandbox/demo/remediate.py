"""`make demo-remediate`: the two remediation DAGs apply real changes to the sandbox cluster.

Starts ZooKeeper + 3 Kafka 3.9 brokers, creates `tp_re_02` (3 partitions, replication factor 1)
with 10,000 keyed messages and `orders` (6 partitions, replication factor 3), then restarts broker 2:
its leaderships move away during the controlled shutdown and stay away. Then, each with
`airflow dags test` and a settings file that enables writes for this cluster only:

1. `kafka_partition_reassignment`, dry run: replication factor of tp_re_02 1 → 2; the plan is printed
   and nothing changes; then the same DAG with `dry_run` false and the plan's id executes it
   (throttled, in batches, verified). Before/after: replicas, ISR and racks of tp_re_02, and all
   10,000 messages read back.
2. `kafka_preferred_leader_election`, dry run, then execute: leaders per broker before/after.

Finally the audit rows both executions wrote (`remediation_audit`), and teardown. Logs of each DAG
run are in var/demo-remediate/.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_ops.lake.open import lake_of
from kafka_ops.lake.plan_files import PLAN_FILES
from kafka_ops.lake.schema import REMEDIATION_PLANS_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.request import ELECTION_FORM, REASSIGNMENT_FORM, RequestForm, parse_request
from kafka_ops.planning.review import render_plan
from kafka_ops.remediation import load_plan, plan_dir, read_audit, read_progress, stored_plan
from kafka_ops.remediation.pacing import pacing_of
from kafka_ops.settings import load_settings
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from sandbox import SandboxCluster, var_dir
from sandbox.demo.common import close_producer

CLUSTER = "default"
TOPIC = "tp_re_02"
MESSAGES = 10_000
RESTARTED_BROKER = 2
THROTTLE = 20_000_000


def say(text: str) -> None:
    print(f"\n== {text}", flush=True)


def write_settings(folder: Path) -> Path:
    """Writes enabled for the sandbox only; its controller was elected a minute ago, so the executor's
    controller quiet period (300 s by default) is off here."""
    path = folder / "kafka-ops.toml"
    path.write_text(
        f'lake_root = "{folder / "lake"}"\n'
        "[[clusters]]\n"
        f'name = "{CLUSTER}"\n'
        "writes_enabled = true\n"
        "remediation_controller_quiet_seconds = 0\n"
    )
    return path


def snapshot(cluster: SandboxCluster) -> ClusterSnapshot:
    return ZooKeeperCollector(CLUSTER, ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot)).collect()


def produce(bootstrap: str) -> set[bytes]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    keys = set()
    for i in range(MESSAGES):
        key = f"key-{i:05d}".encode()
        producer.send(TOPIC, key=key, value=f"value {i}".encode())
        keys.add(key)
    for i in range(600):
        producer.send("orders", key=str(i).encode(), value=b"order")
    producer.flush(60)
    close_producer(producer)
    return keys


def read_back(bootstrap: str) -> set[bytes]:
    """Every key of tp_re_02, read from the beginning without a consumer group."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    keys: set[bytes] = set()
    count = 0
    try:
        consumer.assign([TopicPartition(TOPIC, p) for p in sorted(consumer.partitions_for_topic(TOPIC) or ())])
        consumer.seek_to_beginning()
        deadline = time.monotonic() + 60
        while count < MESSAGES and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                count += len(records)
                keys.update(r.key for r in records if r.key is not None)
    finally:
        consumer.close()
    return keys


def print_topic(snap: ClusterSnapshot) -> None:
    racks = {b: snap.brokers[b].rack for b in snap.brokers}
    for p, replicas in sorted(snap.topics[TOPIC].partitions.items()):
        state = snap.partition_states[(TOPIC, p)]
        print(
            f"  {TOPIC}-{p}  replicas {list(replicas)!s:<8} isr {sorted(state.isr)!s:<8} leader {state.leader}  "
            f"racks {sorted({racks.get(b) or '?' for b in replicas})}"
        )


def leaders_per_broker(snap: ClusterSnapshot) -> str:
    counts = Counter(s.leader for s in snap.partition_states.values() if s.leader >= 0)
    preferred = Counter(r[0] for t in snap.topics.values() for r in t.partitions.values() if r)
    return ", ".join(f"broker {b}: leads {counts[b]}, preferred for {preferred[b]}" for b in sorted(snap.brokers))


def dags_test(dag_id: str, conf: dict[str, Any], cluster: SandboxCluster, settings_file: Path, name: str) -> None:
    """`airflow dags test DAG_ID -c CONF` against the sandbox; its log in var/demo-remediate/."""
    zookeeper = {"conn_type": "zookeeper", "host": cluster.zookeeper_hosts, "extra": {"chroot": cluster.chroot}}
    env = {
        **os.environ,
        "AIRFLOW_CONN_ZOOKEEPER_DEFAULT": json.dumps(zookeeper),
        "AIRFLOW_CONN_KAFKA_DEFAULT": json.dumps({"conn_type": "kafka", "host": cluster.bootstrap_servers}),
        "KAFKA_OPS_CONFIG": str(settings_file),
    }
    env.pop("KAFKA_OPS_LAKE", None)
    log_file = settings_file.parent / f"{name}.log"
    shown = json.dumps(conf)
    print(f"$ airflow dags test {dag_id} -c '{shown}'")
    started = time.monotonic()
    with log_file.open("w") as out:
        command = [str(Path(sys.executable).with_name("airflow")), "dags", "test", dag_id, "-c", shown]
        result = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    finished = [line for line in log_file.read_text().splitlines() if "DagRun Finished" in line]
    if result.returncode != 0 or not finished or "state=success" not in finished[-1]:
        print(log_file.read_text()[-4000:])
        raise SystemExit(f"airflow dags test {dag_id} did not succeed; full log: {log_file}")
    print(f"  run succeeded in {time.monotonic() - started:.0f}s (log: {log_file})")


def newest_plan(lake: Lake, kind: str) -> str:
    rows = [r for r in lake.commit_log(REMEDIATION_PLANS_TABLE, CLUSTER).to_pylist() if r["kind"] == kind]
    if not rows:
        raise SystemExit(f"the dry run stored no {kind} plan in {lake.root}")
    return str(max(rows, key=lambda r: r["created_at"])["plan_id"])


def dry_run_then_execute(
    form: RequestForm, conf: dict[str, Any], cluster: SandboxCluster, settings_file: Path, name: str
) -> str:
    """Dry run, print the plan as the operator reviews it, then execute it by id; returns the plan id."""
    say(f"{form.dag_id}: dry run")
    dags_test(form.dag_id, conf, cluster, settings_file, f"{name}-dry-run")
    settings = load_settings(settings_file)
    lake = lake_of(settings)
    plan_id = newest_plan(lake, conf["action"])
    request = parse_request(conf, settings, form, stored=stored_plan)
    plan = load_plan(lake, CLUSTER, plan_id)
    files = {f: f"{plan_dir(lake, CLUSTER, plan_id)}/{f}" for f in PLAN_FILES}
    print(render_plan(plan, request, pacing_of(plan, request), files=files))
    say(f"{form.dag_id}: execute the reviewed plan {plan_id}")
    dags_test(form.dag_id, {**conf, "dry_run": False, "plan_id": plan_id}, cluster, settings_file, f"{name}-execute")
    progress = read_progress(lake, CLUSTER, plan_id)
    print(f"  plan {plan_id}: {progress.status if progress else 'no progress recorded'}")
    return plan_id


def print_audit(lake: Lake, plan_ids: list[str]) -> None:
    print(f"  {'at (UTC)':<9} {'plan':<17} {'batch':<5} {'action':<15} {'outcome':<9} {'actor':<10} detail")
    for plan_id in plan_ids:
        for r in read_audit(lake, CLUSTER, plan_id):
            batch = "" if r["batch"] is None else str(r["batch"])
            detail = r["detail"] if len(r["detail"]) <= 70 else r["detail"][:67] + "..."
            print(
                f"  {r['at']:%H:%M:%S}  {r['plan_id']:<17} {batch:<5} {r['action']:<15} {r['outcome']:<9} "
                f"{r['actor']:<10} {detail}"
            )


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("kafka").setLevel(logging.CRITICAL)  # connection retries while brokers restart
    folder = var_dir() / "demo-remediate"
    shutil.rmtree(folder, ignore_errors=True)  # a fresh lake: plans of an earlier sandbox mean nothing here
    folder.mkdir(parents=True)
    settings_file = write_settings(folder)
    say("starting the sandbox: ZooKeeper + 3 Kafka 3.9 brokers (rack-a, rack-b, rack-c)")
    with SandboxCluster() as cluster:
        bootstrap = cluster.bootstrap_servers
        print(f"zookeeper {cluster.zookeeper_connect}   bootstrap {bootstrap}")
        say(f"{TOPIC}: 3 partitions, replication factor 1, {MESSAGES:,} keyed messages; orders: 6 x RF 3")
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [1], 1: [2], 2: [3]}), NewTopic("orders", 6, 3)])
        admin.close()
        cluster.wait_healthy(60)
        sent = produce(bootstrap)
        say(f"restarting broker {RESTARTED_BROKER}: its leaderships move away and stay away")
        cluster.restart_broker(RESTARTED_BROKER)
        cluster.wait_healthy(120)
        before = snapshot(cluster)
        print("before")
        print_topic(before)
        print(f"  leaders   {leaders_per_broker(before)}")

        rf_conf = {
            "cluster": CLUSTER, "action": "replication_factor", "topics": [TOPIC], "replication_factor": 2,
            "throttle_bytes_per_s": THROTTLE, "batch_size": 2,
        }  # fmt: skip
        rf_plan = dry_run_then_execute(REASSIGNMENT_FORM, rf_conf, cluster, settings_file, "replication-factor")
        after = snapshot(cluster)
        print(f"{TOPIC} after")
        print_topic(after)
        got = read_back(bootstrap)
        print(f"  {len(got & sent):,} of {len(sent):,} keys read back from {TOPIC}")

        election_conf = {"cluster": CLUSTER, "action": "preferred_election"}
        election_plan = dry_run_then_execute(ELECTION_FORM, election_conf, cluster, settings_file, "election")
        after = snapshot(cluster)
        print(f"  leaders before  {leaders_per_broker(before)}")
        print(f"  leaders after   {leaders_per_broker(after)}")

        say("the audit trail (lake table remediation_audit)")
        print_audit(lake_of(load_settings(settings_file)), [rf_plan, election_plan])
        say("tearing down the sandbox")
    print("done: no Kafka or ZooKeeper process left running")


if __name__ == "__main__":
    main()
