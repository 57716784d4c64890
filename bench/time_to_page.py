"""Benchmark: the time from a failure to the page, on the running topology, against Kafka's own floor and
a Prometheus baseline, in the same run.

Starts both sandbox clusters (ZooKeeper + Kafka 3.9, KRaft + Kafka 4.4) with the Prometheus JMX
exporter on every broker and --topics topics of --partitions partitions on each (replication factor 3:
what a broker's death leaves under-replicated), brings the stack up on them (`python -m stack up`: Airflow
on Celery and PostgreSQL, Spark standalone running the analysis by one spark-submit per job, or on a
Spark Connect server with --analysis-spark connect, the webhook receiver; the snapshot DAG's cron every 5
minutes unless --schedule says otherwise, its change watchers on), and starts the baseline (`stack.baseline`: a
Prometheus scraping the brokers' agents every 30 s, the under-replicated count `> 0 for: 1m`, an
Alertmanager with its default 30 s group wait), both sending to the same webhook receiver. Once the
first scheduled snapshot and analysis ran, it kills brokers with SIGKILL, --kills on each cluster,
taking turns, one at a time; for each it measures, from the kill:
- **floor**: when the cluster's controller dropped the broker (its `/brokers/ids` znode gone; fenced or
  gone in DescribeCluster), polled every 0.25 s: Kafka itself cannot know sooner;
- **page**: when kafka-ops' first page about that cluster reached the receiver (from the snapshot DAG's
  `page_from_snapshot`, or from the analysis: `snapshot_done_s` and `paging_analysis_*_s` say which);
- **baseline**: when the Alertmanager notification of the baseline's alert for that cluster did;
then starts the broker again and measures, from the restart, when kafka-ops resolved that page
(`resolve`). The next fault waits until the cluster is healthy and the baseline's alert resolved.
Then --group-stops consumer groups on each cluster (`stack.group_stops`): a Java consumer commits for
20 s on a topic a producer writes to, then exits or is SIGKILLed (taking turns); timed from the stop to
kafka-ops' page that the group is in ERR (Burrow's STOP), and from its consumer's return to the resolve;
`collection_to_page_s` is the page's delay after the collection it was read from.
Then an event storm on each cluster (`--storm`, on by default): every broker restarted in turn, as a
rolling upgrade does; the snapshot runs it caused are counted (`storms`: `snapshot_runs` against its
`bound`, one run per 5 s of storm), since each watcher event may start one.

A page or resolve that never comes within --page-timeout-s counts as that timeout and is listed in
`missed`. Last line: one JSON object: `p50_s`, `p95_s`, `max_s` (time to page, every fault),
`floor_p95_s`, `baseline_p95_s`, `resolve_p95_s`, `faults` (each fault's figures), per cluster kind
`by_kind`, `groups` (the group stops: `p50_s`, `p95_s`, `max_s`, `collection_to_page_p50_s` and `_p95_s`,
`resolve_p95_s`, `missed`, `faults`), `schedule`, `missed`, and `targets` (p95 <= 60 s, p95 <= floor
p95 + 30 s, p95 below the baseline's) with whether each was met.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins")]

from kafka import KafkaAdminClient  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

from kafka_ops.jars.fetch import var_dir  # noqa: E402
from sandbox import KRaftSandbox, SandboxCluster  # noqa: E402
from stack import baseline, paging  # noqa: E402
from stack.airflow import ADMIN, AirflowApi  # noqa: E402
from stack.group_stops import TimedGroupStops  # noqa: E402
from stack.processes import poll  # noqa: E402
from stack.soak import wait_for_first_snapshot  # noqa: E402
from stack.time_to_page import NAMES, TimedKills, analysed, rolling_restart  # noqa: E402
from stack.topology import ANALYSIS_SPARK, Topology  # noqa: E402


def make_topics(cluster: SandboxCluster | KRaftSandbox, topics: int, partitions: int) -> None:
    """`topics` topics of `partitions` partitions, each replicated on the 3 brokers: what a broker's death
    leaves under-replicated (a cluster without topics loses nothing Kafka or anyone would page on)."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=30_000)
    try:
        admin.create_topics([NewTopic(f"orders-{i}", partitions, replication_factor=3) for i in range(topics)])
    finally:
        admin.close()
    cluster.wait_healthy(180)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=10, help="broker kills on each cluster kind")
    parser.add_argument("--group-stops", type=int, default=3, help="consumer groups stopped on each cluster kind")
    parser.add_argument("--topics", type=int, default=10, help="topics on each cluster (replication factor 3)")
    parser.add_argument("--partitions", type=int, default=6, help="partitions per topic")
    parser.add_argument("--schedule", default="*/5 * * * *", help="the snapshot DAG's cron heartbeat")
    parser.add_argument("--page-timeout-s", type=float, default=900, help="how long a page or resolve may take")
    parser.add_argument("--analysis-spark", choices=ANALYSIS_SPARK, default="submit",
                        help="the analysis by one spark-submit per job (default), or on the stack's Spark "
                        "Connect server")  # fmt: skip
    parser.add_argument("--storm", action=argparse.BooleanOptionalAction, default=True,
                        help="end with a rolling restart of each cluster's brokers, counting the runs")  # fmt: skip
    parser.add_argument("--root", type=Path, default=None, help="working folder (default: var/bench-time-to-page)")
    args = parser.parse_args(argv)
    if args.kills < 0 or args.group_stops < 0 or args.kills + args.group_stops == 0:
        parser.error(f"--kills and --group-stops: not negative, not both 0 (got {args.kills}, {args.group_stops})")
    # a run in the background ignores Ctrl-C: SIGTERM tears the stack and the clusters down as Ctrl-C does
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    for noisy in ("httpx", "kafka", "kazoo"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    root = (args.root or var_dir() / "bench-time-to-page").resolve()
    shutil.rmtree(root, ignore_errors=True)
    zk = SandboxCluster(root=root / "zk", metrics_agent=True)
    kraft = KRaftSandbox(root=root / "kraft", metrics_agent=True)
    topology = Topology(root / "stack", args.schedule, args.analysis_spark)
    watch: baseline.Baseline | None = None
    began = time.monotonic()
    try:
        zk.start()
        kraft.start()
        for cluster in (zk, kraft):
            make_topics(cluster, args.topics, args.partitions)
        state = topology.up("local", {"zk": zk.root, "kraft": kraft.root})
        ports = {NAMES["zk"]: sorted(zk.metrics_ports.values()), NAMES["kraft"]: sorted(kraft.metrics_ports.values())}
        watch = baseline.Baseline(root / "baseline", ports, state.ports["webhook"]).start()
        password = json.loads((Path(state.root) / "airflow" / "passwords.json").read_text())[ADMIN]
        api = AirflowApi(state.urls["airflow"], ADMIN, password)
        wait_for_first_snapshot(state, 900)
        if poll(lambda: analysed(api), 900, 5) is None:
            raise SystemExit("no analysis run succeeded within 15 minutes of the first snapshot")
        kills = TimedKills(state, zk, kraft, timeout_s=args.page_timeout_s, with_baseline=True, api=api)
        faults = [kills.kill(mode) for _ in range(args.kills) for mode in ("zk", "kraft")]
        stops = TimedGroupStops(state, zk, kraft, "orders-0", timeout_s=args.page_timeout_s, api=api,
                                log_dir=root / "consumers")  # fmt: skip
        groups = [stops.stop(mode) for _ in range(args.group_stops) for mode in ("zk", "kraft")]
        storms = (
            [rolling_restart(api, cluster, mode) for mode, cluster in (("zk", zk), ("kraft", kraft))]
            if args.storm
            else []
        )
    finally:
        if watch is not None:
            watch.stop()
        topology.down()
        kraft.stop()
        zk.stop()
    result: dict[str, Any] = {
        "bench": "time_to_page",
        "schedule": args.schedule,
        "analysis_spark": args.analysis_spark,
        "kills_per_kind": args.kills,
        **paging.summary(faults, args.page_timeout_s),
        "faults": faults,
        "groups": {**paging.group_summary(groups, args.page_timeout_s), "faults": groups},
        "storms": storms,
        "minutes": round((time.monotonic() - began) / 60, 1),
    }
    result["targets"] = paging.targets(result)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
