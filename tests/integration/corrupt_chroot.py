"""A copy of the sandbox's Kafka metadata in another ZooKeeper chroot, corrupted on purpose.

Kafka never writes an ISR that is not a subset of the replicas; a bug, a hand edit or a bad
restore can. The copy is taken znode by znode (data only) from the live chroot, then one
partition state is rewritten, so the collector reads a real cluster's metadata with one lie in it.
"""

from __future__ import annotations

import json

from kazoo.client import KazooClient

from sandbox import SandboxCluster


def copy_tree(zk: KazooClient, source: str, target: str) -> None:
    data, _ = zk.get(source)
    zk.ensure_path(target)
    zk.set(target, data)
    for child in zk.get_children(source):
        copy_tree(zk, f"{source}/{child}", f"{target}/{child}")


def corrupted_copy(sandbox: SandboxCluster, chroot: str, topic: str, partition: int, isr: list[int]) -> None:
    """Copy `sandbox`'s chroot to `chroot` and give `topic`-`partition` the ISR `isr`."""
    zk = KazooClient(hosts=sandbox.zookeeper_hosts)
    zk.start()
    try:
        for part in (
            "brokers",
            "controller",
            "controller_epoch",
            "config",
            "cluster",
            "admin",
            "isr_change_notification",
        ):
            if zk.exists(f"{sandbox.chroot}/{part}"):
                copy_tree(zk, f"{sandbox.chroot}/{part}", f"{chroot}/{part}")
        path = f"{chroot}/brokers/topics/{topic}/partitions/{partition}/state"
        state = json.loads(zk.get(path)[0])
        zk.set(path, json.dumps({**state, "isr": isr}).encode())
    finally:
        zk.stop()
        zk.close()
