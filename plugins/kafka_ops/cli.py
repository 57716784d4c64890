"""`kafka-ops` command line: snapshot a cluster into the lake and print what it saw; print findings;
remove the replication throttles a finished remediation plan left (`remediation clear-throttles`); set, list
and end silences (`silence`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from kafka_ops.cli_broker import add_broker_parser, run_broker
from kafka_ops.cli_lake import add_lake_parser, run_lake
from kafka_ops.cli_silence import add_silence_parser, run_silence
from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.open import add_lake_format_argument, lake_at, open_lake
from kafka_ops.report.digest import render_findings
from kafka_ops.settings import DEFAULT_LAKE, load_settings
from kafka_ops.snapshot.publish import snapshot_to_lake
from kafka_ops.snapshot.tables import render_summary
from kafka_ops.sources import log_dirs
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafka-ops", description="Keep Apache Kafka clusters healthy.")
    verbs = parser.add_subparsers(dest="verb", required=True)
    snap = verbs.add_parser(
        "snapshot",
        help="read a cluster's metadata (ZooKeeper, or a KRaft cluster's Admin API) into the lake and print a summary",
        description="Read brokers, topics, partition states, controller, reassignments and configs "
        "from ZooKeeper (--zookeeper) or from a KRaft cluster's brokers and controller quorum "
        "(--bootstrap-servers), publish them atomically to the lake, and print a summary. With both, a "
        "ZooKeeper snapshot also reads the brokers' log dirs and replica sizes through --bootstrap-servers.",
    )
    snap.add_argument("--zookeeper", help="zookeeper.connect string, e.g. 127.0.0.1:2181/kafka")
    snap.add_argument(
        "--bootstrap-servers",
        help="a KRaft cluster's brokers, e.g. 127.0.0.1:9092 (PLAINTEXT); with --zookeeper, where the load is read",
    )
    snap.add_argument("--lake", default=os.environ.get("KAFKA_OPS_LAKE", DEFAULT_LAKE), help="lake root path or URL")
    add_lake_format_argument(snap)
    snap.add_argument("--cluster", default="default", help="the cluster's name in the lake (default: default)")
    snap.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for ZooKeeper or the brokers (default 10)"
    )
    snap.add_argument(
        "--digest-user",
        default=None,
        help="ZooKeeper digest user; the password comes from $KAFKA_OPS_ZK_PASSWORD",
    )
    snap.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    findings = verbs.add_parser(
        "findings",
        help="print the latest health findings of a cluster (written by the analysis DAG / Spark job)",
    )
    findings.add_argument(
        "--lake", default=os.environ.get("KAFKA_OPS_LAKE", DEFAULT_LAKE), help="lake root path or URL"
    )
    add_lake_format_argument(findings)
    findings.add_argument("--cluster", default="default", help="the cluster's name in the lake (default: default)")
    findings.add_argument("--snapshot-id", default=None, help="an analysed snapshot (default: the latest)")
    _remediation_parser(verbs)
    add_lake_parser(verbs)
    add_silence_parser(verbs)
    add_broker_parser(verbs)
    return parser


def _remediation_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    remediation = verbs.add_parser("remediation", help="act on a stored remediation plan")
    actions = remediation.add_subparsers(dest="action", required=True)
    clear = actions.add_parser(
        "clear-throttles",
        help="remove the replication throttles a finished or cancelled plan left behind",
        description="Remove the replication throttles (broker rates, topic throttled-replica lists) that plan "
        "PLAN_ID set and could not remove because another reassignment was in flight when it ended. Refused "
        "while a move of the plan is in flight; throttles another move in flight still needs are kept. Writes "
        "only when writes_enabled is true for the cluster in the kafka-ops settings ($KAFKA_OPS_CONFIG); "
        "audited in remediation_audit. A ZooKeeper cluster is read through --zookeeper; a KRaft cluster, which "
        "has none, through --bootstrap-servers alone (its remediation_backend must be admin_api).",
    )
    clear.add_argument("--cluster", required=True, help="the cluster's name in the kafka-ops settings")
    clear.add_argument("--plan-id", required=True, help="the plan id (16 hex digits)")
    clear.add_argument(
        "--zookeeper", default=None, help="a ZooKeeper cluster's zookeeper.connect string, e.g. 127.0.0.1:2181/kafka"
    )
    clear.add_argument(
        "--bootstrap-servers",
        default=None,
        help="Kafka brokers: the admin_api back end writes through them, and a KRaft cluster (no --zookeeper) is "
        "read through them",
    )
    clear.add_argument("--lake", default=None, help="lake root path or URL (default: the settings' lake_root)")
    add_lake_format_argument(clear)
    clear.add_argument("--dry-run", action="store_true", help="say what would be removed; write nothing")
    clear.add_argument("--actor", default=os.environ.get("USER", "cli"), help="who runs it, for the audit")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.verb == "findings":
        return _findings(args)
    if args.verb == "remediation":
        return _clear_throttles(args)
    if args.verb == "lake":
        return run_lake(args)
    if args.verb == "silence":
        return run_silence(args)
    if args.verb == "broker":
        return run_broker(args)
    return _snapshot(args)


def _findings(args: argparse.Namespace) -> int:
    try:
        print(render_findings(lake_at(args.lake, args.lake_format), args.cluster, args.snapshot_id))
    except KafkaOpsError as e:
        print(f"kafka-ops: {e}", file=sys.stderr)
        return 2
    return 0


def _clear_throttles(args: argparse.Namespace) -> int:
    from kafka_ops.remediation import backend_for, clear_throttles  # noqa: PLC0415
    from kafka_ops.remediation.live import KRaftLiveReader  # noqa: PLC0415

    if not args.zookeeper and not args.bootstrap_servers:
        print(
            "kafka-ops: remediation clear-throttles needs --zookeeper (a ZooKeeper cluster) or --bootstrap-servers "
            "(a KRaft cluster)",
            file=sys.stderr,
        )
        return 2
    try:
        settings = load_settings()
        config = settings.cluster(args.cluster)
        zookeeper = ZooKeeperTarget.parse(args.zookeeper) if args.zookeeper else None
        admin = KafkaTarget(args.bootstrap_servers) if args.bootstrap_servers else None
        # without ZooKeeper the cluster is KRaft: its live state comes from the same brokers
        reader = KRaftLiveReader(config.name, admin) if zookeeper is None and admin is not None else None
        backend = backend_for(config, zookeeper=zookeeper, admin_factory=admin)
        try:
            report = clear_throttles(
                args.plan_id,
                lake=open_lake(args.lake or settings.lake_root, args.lake_format or settings.lake_format),
                cluster_config=config,
                backend=backend,
                zookeeper=zookeeper,
                reader=reader,
                actor=args.actor,
                dry_run=args.dry_run,
            )
        finally:
            backend.close()
    except KafkaOpsError as e:
        print(f"kafka-ops: {e}", file=sys.stderr)
        return 2
    print(json.dumps(report.summary(), sort_keys=True))
    return 0


def _snapshot(args: argparse.Namespace) -> int:
    auth = None
    if args.digest_user:
        auth = (args.digest_user, os.environ.get("KAFKA_OPS_ZK_PASSWORD", ""))
    if not args.zookeeper and not args.bootstrap_servers:
        print("kafka-ops: snapshot needs --zookeeper or --bootstrap-servers (or both)", file=sys.stderr)
        return 2
    timeout_ms = int(args.timeout * 1000)
    options = {"request_timeout_ms": timeout_ms, "bootstrap_timeout_ms": timeout_ms}
    try:
        lake = lake_at(args.lake, args.lake_format)
        if args.zookeeper:
            zookeeper = ZooKeeperTarget.parse(args.zookeeper, digest_auth=auth, timeout_s=args.timeout)
            brokers = KafkaTarget(args.bootstrap_servers, log_dirs.bounded(options)) if args.bootstrap_servers else None
            snap, info = snapshot_to_lake(args.cluster, zookeeper, lake, None, brokers)
        else:
            snap, info = snapshot_to_lake(args.cluster, KafkaTarget(args.bootstrap_servers, options), lake)
    except KafkaOpsError as e:
        print(f"kafka-ops: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(info, sort_keys=True))
    else:
        examples = [f"{i.path}: {i.problem}" for i in snap.issues[:5]]
        urp = snap.under_replicated()
        print(render_summary(info, examples))
        if urp:
            shown = ", ".join(f"{t}-{p}" for t, p in urp[:10])
            print(f"  under-replicated: {shown}{' ...' if len(urp) > 10 else ''}")
        print(f"  lake           {args.lake}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
