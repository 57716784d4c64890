"""`python -m sandbox up|down|status [--mode zk|kraft|migration]`: a sandbox cluster that outlives
the command.

`--mode zk` (the default) is ZooKeeper + 3 Kafka 3.9 brokers; `--mode kraft` is 3 KRaft controllers
+ 3 Kafka 4 brokers; `--mode migration` is the ZooKeeper cluster with a 3.9 KRaft controller migrating
it, left in dual-write (`MigrationSandbox`'s later steps are for the tests). Each in its own folder, so
all can be up at once.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from pathlib import Path

from kafka_ops.errors import KafkaOpsError
from kafka_ops.jars.fetch import var_dir
from sandbox.cluster import SandboxCluster, attach
from sandbox.kraft import KRaftSandbox, attach_kraft
from sandbox.migration import MigrationSandbox, attach_migration


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox",
        description="Start, inspect or stop a local ZooKeeper + 3 Kafka 3.9 brokers (racks a/b/c), "
        "or with --mode kraft 3 KRaft controllers + 3 Kafka 4 brokers (racks a/b/c).",
    )
    parser.add_argument("verb", choices=["up", "down", "status"])
    parser.add_argument(
        "--mode",
        choices=["zk", "kraft", "migration"],
        default="zk",
        help="cluster kind (default: zk; migration: a 3.9 ZooKeeper cluster its KRaft controller is migrating, "
        "left in dual-write)",
    )
    parser.add_argument("--root", default=None, help="data folder (default: var/sandbox/cli, cli-kraft for kraft)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    if args.mode == "migration":
        logging.getLogger("kafka").setLevel(logging.WARNING)
        return _migration(args.verb, var_dir() / "sandbox" / "cli-migration" if args.root is None else Path(args.root))
    if args.mode == "kraft":
        logging.getLogger("kafka").setLevel(logging.WARNING)  # the health polls' client chatter
        return _kraft(args.verb, var_dir() / "sandbox" / "cli-kraft" if args.root is None else Path(args.root))
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


def _kraft(verb: str, root: Path) -> int:
    try:
        if verb == "up":
            if (root / "state.json").exists() and _any_kraft_running(root):
                print(f"a KRaft sandbox is already up in {root}; run 'down --mode kraft' first", file=sys.stderr)
                return 1
            shutil.rmtree(root, ignore_errors=True)
            cluster = KRaftSandbox(root=root, die_with_parent=False).start()
            print(json.dumps(_kraft_summary(cluster)))
        elif verb == "down":
            attach_kraft(root).stop()
            shutil.rmtree(root, ignore_errors=True)
            print(f"KRaft sandbox in {root} stopped")
        else:
            cluster = attach_kraft(root)
            print(
                json.dumps(
                    {
                        **_kraft_summary(cluster),
                        "brokers_running": {b: cluster.broker_running(b) for b in cluster.broker_ids()},
                        "controllers_running": {c: cluster.controller_running(c) for c in cluster.controller_ids()},
                    }
                )
            )
    except KafkaOpsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _migration(verb: str, root: Path) -> int:
    try:
        if verb == "up":
            if (root / "state.json").exists() and _any_migration_running(root):
                print(
                    f"a migration sandbox is already up in {root}; run 'down --mode migration' first", file=sys.stderr
                )
                return 1
            shutil.rmtree(root, ignore_errors=True)
            cluster = MigrationSandbox(root=root, die_with_parent=False)
            cluster.start()
            cluster.start_controllers()
            cluster.enable_migration_on_brokers()
            print(json.dumps(_migration_summary(cluster)))
        elif verb == "down":
            attach_migration(root).stop()
            shutil.rmtree(root, ignore_errors=True)
            print(f"migration sandbox in {root} stopped")
        else:
            cluster = attach_migration(root)
            summary = _migration_summary(cluster)
            summary["brokers_running"] = {b: cluster.broker_running(b) for b in cluster.broker_ids()}
            summary["controllers_running"] = {c: cluster.controller_running(c) for c in cluster.controller_ports}
            print(json.dumps(summary))
    except KafkaOpsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _migration_summary(cluster: MigrationSandbox) -> dict[str, object]:
    return {
        "mode": "migration",
        "zookeeper": cluster.zookeeper_connect,
        "bootstrap_servers": cluster.bootstrap_servers,
        "controller_bootstrap_servers": cluster.controller_bootstrap,
        "broker_modes": cluster.broker_modes,
        "migration": cluster.migration_znode(),
    }


def _any_migration_running(root: Path) -> bool:
    try:
        cluster = attach_migration(root)
    except KafkaOpsError:
        return False
    return any(cluster.broker_running(b) for b in cluster.broker_ids()) or any(
        cluster.controller_running(c) for c in cluster.controller_ports
    )


def _kraft_summary(cluster: KRaftSandbox) -> dict[str, object]:
    from kafka.errors import KafkaError  # noqa: PLC0415 - only the KRaft verbs need the client

    try:
        leader: int | None = cluster.active_controller_id()
    except (KafkaError, KafkaOpsError):
        leader = None  # no broker answers: the quorum's leader cannot be asked
    return {
        "mode": "kraft",
        "bootstrap_servers": cluster.bootstrap_servers,
        "controller_quorum_voters": cluster.quorum_voters,
        "cluster_id": cluster.cluster_id,
        "active_controller": leader,
    }


def _any_kraft_running(root: Path) -> bool:
    try:
        cluster = attach_kraft(root)
    except KafkaOpsError:
        return False
    return any(cluster.broker_running(b) for b in cluster.broker_ids()) or any(
        cluster.controller_running(c) for c in cluster.controller_ids()
    )


def _any_running(root: Path) -> bool:
    try:
        cluster = attach(root)
    except KafkaOpsError:
        return False
    return any(cluster.broker_running(b) for b in cluster.broker_ids())


if __name__ == "__main__":
    sys.exit(main())
