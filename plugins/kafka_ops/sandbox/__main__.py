"""`python -m kafka_ops.sandbox up|down|status`: a sandbox cluster that outlives the command."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from pathlib import Path

from kafka_ops.errors import KafkaOpsError
from kafka_ops.sandbox.cluster import SandboxCluster, attach
from kafka_ops.sandbox.jars import var_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafka_ops.sandbox",
        description="Start, inspect or stop a local ZooKeeper + 3 Kafka 3.9 brokers (racks a/b/c).",
    )
    parser.add_argument("verb", choices=["up", "down", "status"])
    parser.add_argument("--root", default=None, help="data folder (default: var/sandbox/cli)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    root = var_dir() / "sandbox" / "cli" if args.root is None else Path(args.root)
    try:
        if args.verb == "up":
            if (root / "state.json").exists() and _any_running(root):
                print(f"a sandbox is already up in {root}; run 'down' first", file=sys.stderr)
                return 1
            shutil.rmtree(root, ignore_errors=True)
            cluster = SandboxCluster(root=root, die_with_parent=False).start()
            print(json.dumps({"zookeeper": cluster.zookeeper_connect, "bootstrap_servers": cluster.bootstrap_servers}))
        elif args.verb == "down":
            attach(root).stop()
            shutil.rmtree(root, ignore_errors=True)
            print(f"sandbox in {root} stopped")
        else:
            cluster = attach(root)
            running = {b: cluster.broker_running(b) for b in cluster.broker_ids()}
            print(
                json.dumps(
                    {
                        "zookeeper": cluster.zookeeper_connect,
                        "bootstrap_servers": cluster.bootstrap_servers,
                        "brokers_running": running,
                    }
                )
            )
    except KafkaOpsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _any_running(root: Path) -> bool:
    try:
        cluster = attach(root)
    except KafkaOpsError:
        return False
    return any(cluster.broker_running(b) for b in cluster.broker_ids())


if __name__ == "__main__":
    sys.exit(main())
