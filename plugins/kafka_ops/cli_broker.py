"""`kafka-ops broker unregister`: remove a decommissioned, stopped broker's registration from a KRaft
cluster as its own reviewed step (`planning.unregister`, `remediation.unregister`). Without `--execute`
it snapshots the cluster into the lake, makes the plan and prints it for review; with it, it executes that
plan (writes enabled for the cluster, checked again on a fresh read)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.open import add_lake_format_argument, open_lake
from kafka_ops.planning.unregister import plan_unregister
from kafka_ops.remediation.unregister import unregister_broker
from kafka_ops.settings import load_settings
from kafka_ops.snapshot.publish import snapshot_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget


def add_broker_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    broker = verbs.add_parser("broker", help="steps on one broker of a KRaft cluster")
    actions = broker.add_subparsers(dest="action", required=True)
    unregister = actions.add_parser(
        "unregister",
        help="remove a decommissioned, stopped broker's registration (KRaft)",
        description="A decommissioned broker that was stopped stays registered, fenced, and a broker started "
        "with its id takes the registration back. This removes it (UnregisterBroker). Refused unless the broker "
        "is fenced (stopped) and holds no replica, on a fresh read; writes only with --execute and writes_enabled "
        "for the cluster in the kafka-ops settings ($KAFKA_OPS_CONFIG); audited in remediation_audit.",
    )
    unregister.add_argument("--cluster", required=True, help="the cluster's name in the kafka-ops settings")
    unregister.add_argument("--broker", type=int, required=True, help="the broker id to unregister")
    unregister.add_argument("--bootstrap-servers", required=True, help="the cluster's brokers, host:port,...")
    unregister.add_argument("--lake", default=None, help="lake root path or URL (default: the settings' lake_root)")
    add_lake_format_argument(unregister)
    unregister.add_argument("--execute", action="store_true", help="unregister it (default: print the plan only)")
    unregister.add_argument("--actor", default=os.environ.get("USER", "cli"), help="who runs it, for the audit")


def run_broker(args: argparse.Namespace) -> int:
    try:
        settings = load_settings()
        config = settings.cluster(args.cluster)
        lake = open_lake(args.lake or settings.lake_root, args.lake_format or settings.lake_format)
        target = KafkaTarget(args.bootstrap_servers)
        snapshot, _ = snapshot_to_lake(config.name, target, lake)
        plan = plan_unregister(snapshot, args.broker)
        if not args.execute:
            print(f"plan {plan.plan_id}: unregister broker {args.broker} of cluster {config.name} (snapshot "
                  f"{snapshot.snapshot_id}): it is fenced and holds no replica. Run again with --execute to apply "
                  "it (writes_enabled must be true for the cluster).")  # fmt: skip
            return 0
        done = unregister_broker(plan, lake=lake, cluster_config=config, target=target, actor=args.actor)
    except KafkaOpsError as e:
        print(f"kafka-ops: {e}", file=sys.stderr)
        return 2
    print(json.dumps(done, sort_keys=True))
    return 0
