"""Seed a ZooKeeper chroot with a synthetic Kafka cluster in Kafka 3.9's exact znode formats."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from kazoo.client import KazooClient

TXN_OPS = 400


def _znodes(topics: int, partitions: int, brokers: int, seed: int) -> Iterator[tuple[str, bytes]]:
    rng = random.Random(seed)
    racks = [f"rack-{chr(ord('a') + i % 6)}" for i in range(brokers)]
    for path in ["/brokers", "/brokers/ids", "/brokers/topics", "/admin", "/admin/delete_topics",
                 "/config", "/config/topics", "/config/brokers", "/isr_change_notification",
                 "/log_dir_event_notification", "/cluster"]:  # fmt: skip
        yield path, b""
    yield "/cluster/id", b'{"version":"1","id":"synthetic-cluster-000"}'
    yield "/controller_epoch", b"7"
    yield "/controller", b'{"version":2,"brokerid":1,"timestamp":"1795000000000","kraftControllerEpoch":-1}'
    for b in range(1, brokers + 1):
        yield f"/brokers/ids/{b}", json.dumps({
            "features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
            "endpoints": [f"PLAINTEXT://10.0.0.{b}:9092"], "rack": racks[b - 1], "jmx_port": -1,
            "port": 9092, "host": f"10.0.0.{b}", "version": 5, "timestamp": "1795000000000",
        }).encode()  # fmt: skip
    per_topic = partitions // topics
    for t in range(topics):
        name = f"topic-{t:05d}"
        assignment = {str(p): rng.sample(range(1, brokers + 1), 3) for p in range(per_topic)}
        yield f"/brokers/topics/{name}", json.dumps({
            "partitions": assignment, "topic_id": f"id{t:020d}", "adding_replicas": {},
            "removing_replicas": {}, "version": 3,
        }).encode()  # fmt: skip
        yield f"/brokers/topics/{name}/partitions", b""
        for p, replicas in assignment.items():
            isr = replicas if rng.random() > 0.02 else replicas[:2]
            yield f"/brokers/topics/{name}/partitions/{p}", b""
            yield f"/brokers/topics/{name}/partitions/{p}/state", json.dumps({
                "controller_epoch": 7, "leader": isr[0], "version": 1, "leader_epoch": 3,
                "isr": isr,
            }).encode()  # fmt: skip
        yield f"/config/topics/{name}", b'{"version":1,"config":{"retention.ms":"86400000"}}'


def seed(hosts: str, chroot: str, topics: int, partitions: int, brokers: int, seed: int = 7) -> int:
    """Create the synthetic cluster under `chroot` (which must not exist). Returns znodes made."""
    zk = KazooClient(hosts=hosts, timeout=30)
    zk.start()
    try:
        zk.ensure_path(chroot)
        pending = []
        txn = zk.transaction()
        count = ops = 0
        for path, data in _znodes(topics, partitions, brokers, seed):
            txn.create(chroot + path, data)
            ops += 1
            count += 1
            if ops == TXN_OPS:
                pending.append(txn.commit_async())
                txn, ops = zk.transaction(), 0
                if len(pending) > 32:
                    _check(pending.pop(0).get())
        if ops:
            pending.append(txn.commit_async())
        for p in pending:
            _check(p.get())
        return count
    finally:
        zk.stop()
        zk.close()


def _check(results: list[object]) -> None:
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise RuntimeError(f"seeding failed: {failed[0]!r}")
