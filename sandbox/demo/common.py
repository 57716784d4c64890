"""What both halves of `make demo` share: headings, a producer, `airflow dags test` against a sandbox,
and what the lake and the alert sink hold, printed for a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka.errors import KafkaError
from kafka.producer import KafkaProducer

from kafka_ops.lake.store import Lake
from sandbox import var_dir

SPARK_LOCAL = {"conn_type": "spark", "host": "local[2]"}


def say(text: str) -> None:
    print(f"\n== {text}", flush=True)


def produce(bootstrap: str, messages: int, topics: list[str]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    for i in range(messages):
        for topic in topics:
            producer.send(topic, key=str(i).encode(), value=f"event {i}".encode())
    producer.flush(60)
    close_producer(producer)


def close_producer(producer: KafkaProducer, timeout: float = 30) -> None:
    """Close `producer`, stopping its sender thread even when the close fails: kafka-python 3.0.12's
    close() flushes first and, when that times out (a broker down, as the demos make them), raises
    before stopping the sender, which then spins on the lost leader at a full core."""
    try:
        producer.close(timeout=timeout)
    except KafkaError:
        producer._sender.force_close()  # what close() would have done next
        raise


def airflow_dags_test(
    dag_id: str,
    lake_root: str,
    connections: Mapping[str, Mapping[str, Any]],
    settings: Path | None = None,
    log_name: str = "demo",
) -> None:
    """`airflow dags test DAG_ID` on the demo lake, with `connections` (conn id → connection) as
    `AIRFLOW_CONN_*` variables and, given `settings`, that kafka-ops settings file; its log in var/."""
    env = {
        **os.environ,
        **{f"AIRFLOW_CONN_{conn_id.upper()}": json.dumps(conn) for conn_id, conn in connections.items()},
        "KAFKA_OPS_LAKE": lake_root,
    }
    if settings is not None:
        env["KAFKA_OPS_CONFIG"] = str(settings)
    airflow = Path(sys.executable).with_name("airflow")
    log_file = var_dir() / f"{log_name}-{dag_id}.log"
    started = time.monotonic()
    with log_file.open("w") as out:
        command = [str(airflow), "dags", "test", dag_id]
        result = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        print(log_file.read_text()[-4000:])
        raise SystemExit(f"airflow dags test {dag_id} failed (exit {result.returncode}); full log: {log_file}")
    print(f"airflow dags test {dag_id}: success in {time.monotonic() - started:.0f}s (log: {log_file})")


def print_lake(lake: Lake, cluster: str) -> None:
    snapshot_id = lake.latest_snapshot_id(cluster)
    if snapshot_id is None:
        raise SystemExit(f"the DAG ran but the lake at {lake.root} has no snapshot of {cluster!r}")
    (row,) = [r for r in lake.snapshots(cluster).to_pylist() if r["snapshot_id"] == snapshot_id]
    parts = lake.read("partitions", cluster, [snapshot_id]).to_pylist()
    brokers = sorted(r["broker_id"] for r in lake.read("brokers", cluster, [snapshot_id]).to_pylist())
    under = [p for p in parts if p["has_state"] and len(p["isr"]) < len(p["replicas"])]
    offline = [p for p in parts if p["leader"] == -1 or p["leader"] not in brokers]
    print(f"cluster {cluster}  snapshot {snapshot_id}  (captured {row['captured_at']:%Y-%m-%d %H:%M:%S} UTC)")
    print(f"  brokers registered   {brokers}")
    print(f"  topics / partitions  {row['topic_count']} / {row['partition_count']}")
    controller = "quorum leader" if row["source"] == "kraft" else "broker"
    print(f"  controller           {controller} {row['controller_id']}, epoch {row['controller_epoch']}")
    print(f"  under-replicated     {row['under_replicated_count']}")
    for p in under[:12]:
        missing = sorted(set(p["replicas"]) - set(p["isr"]))
        name = f"{p['topic']}-{p['partition']}"
        print(f"    {name:<12} replicas {p['replicas']}  isr {p['isr']}  missing {missing}")
    print(f"  offline              {row['offline_count']}")
    for p in offline[:12]:
        print(f"    {p['topic']}-{p['partition']:<3} leader {p['leader']}  replicas {p['replicas']}")
    print(f"  collection errors    {row['issue_count']}")
    collections = lake.read("group_snapshots", cluster).to_pylist()
    latest = max(collections, key=lambda r: r["captured_at"])["snapshot_id"] if collections else None
    for group in lake.read("consumer_groups", cluster, [latest] if latest else []).to_pylist():
        offsets = [o for o in lake.read("group_offsets", cluster, [group["snapshot_id"]]).to_pylist()
                   if o["group_id"] == group["group_id"]]  # fmt: skip
        lag = sum(o["lag"] or 0 for o in offsets)
        print(f"  consumer group       {group['group_id']} ({group['state']}): {len(offsets)} partitions, lag {lag}")
    print(f"  lake                 {lake.root}")


def print_alerts(lake_root: Path, cluster: str, events: tuple[str, ...] = ("open", "remind")) -> None:
    """The notifications the log sink recorded, as the on-call engineer would read them."""
    sink = lake_root / "_alerting" / f"{cluster}.alerts.jsonl"
    sent = [json.loads(line) for line in sink.read_text().splitlines()] if sink.exists() else []
    shown = [n for n in sent if n["event"] in events]
    for n in shown:
        print(f"{n['headline']}")
        if n["event"] != "resolve":
            print(f"    since {n['since']}; likely cause: {n['cause']}")
            print(f"    affected: {', '.join(a['text'] for a in n['affected'][:3])}")
            print(f"    do: {n['action']}")
    if not shown:
        print(f"(nothing {'/'.join(events)} in {sink})")


def print_pointers(lake_root: Path, cluster: str) -> None:
    reports = lake_root / "_reports" / cluster
    print(f"cluster {cluster}")
    print(f"  health report (latest)   file://{reports / 'latest.html'}")
    print(f"  every report             {reports}/")
    print(f"  Data Docs (validations)  file://{lake_root / '_validation' / 'data_docs' / cluster / 'index.html'}")
    print(f"  alerts sent (log sink)   {lake_root / '_alerting' / f'{cluster}.alerts.jsonl'}")
