"""A small KRaft cluster with tiered storage (KIP-405) turned on: one controller, one or two brokers that
copy rolled segments of topics with `remote.storage.enable=true` to "remote" storage and delete them
locally past `local.retention.bytes` / `local.retention.ms`.

The remote storage is Kafka's own test plugin, `LocalTieredStorage` (kafka-storage's test fixtures,
fetched by `ensure_tiered_storage_jar` and loaded through `remote.log.storage.manager.class.path`), which
keeps each remote segment in a folder of the sandbox (`remote_dir`, shared by the brokers as an object
store would be). The remote log metadata is Kafka's default `TopicBasedRemoteLogMetadataManager`
(`__remote_log_metadata`, one partition, replication factor 1). The remote log manager and the local
retention check run every second, so a segment is tiered and then deleted locally within seconds of
rolling. A test starts it only where it needs it: `with tiered_sandbox(root) as cluster: ...`.
"""

from __future__ import annotations

from pathlib import Path

from kafka_ops.jars.fetch import ensure_tiered_storage_jar
from sandbox.kraft import KRaftSandbox

LOCAL_TIERED_STORAGE = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
CONTROLLER_SETTINGS = {"remote.log.storage.system.enable": "true"}
"""A KRaft controller validates a new topic's configs: it refuses `remote.storage.enable=true` unless
tiered storage is on in its own configuration too."""
REMOTE_DIR = "remote-storage"
"""The folder of the sandbox's root that `LocalTieredStorage` writes remote segments into."""


def tiered_storage_settings(remote_dir: Path, listener: str = "PLAINTEXT", replication: int = 1) -> dict[str, str]:
    """Broker settings that turn tiered storage on with `LocalTieredStorage` writing into `remote_dir`;
    `listener` is the one the remote log metadata manager's clients use, `replication` the replication
    factor of `__remote_log_metadata` and of the internal topics (at most the number of brokers)."""
    rf = str(replication)
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": LOCAL_TIERED_STORAGE,
        "remote.log.storage.manager.class.path": str(ensure_tiered_storage_jar()),
        "rsm.config.dir": str(remote_dir),
        "remote.log.metadata.manager.listener.name": listener,
        "rlmm.config.remote.log.metadata.topic.replication.factor": rf,
        "rlmm.config.remote.log.metadata.topic.num.partitions": "1",
        # copy and expire every second, and delete tiered segments locally as soon as retention allows
        "remote.log.manager.task.interval.ms": "1000",
        "log.retention.check.interval.ms": "1000",
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": "1",
    }


def tiered_sandbox(root: Path, brokers: int = 1, broker_heap: str = "320m") -> KRaftSandbox:
    """A `KRaftSandbox` (not started) of one controller and `brokers` brokers with tiered storage on;
    its remote segments go to `root / REMOTE_DIR`."""
    remote = root / REMOTE_DIR
    remote.mkdir(parents=True, exist_ok=True)
    return KRaftSandbox(
        root=root,
        brokers=brokers,
        controllers=1,
        broker_heap=broker_heap,
        controller_heap="192m",
        broker_settings=tiered_storage_settings(remote, replication=min(brokers, 3)),
        controller_settings=CONTROLLER_SETTINGS,
    )
