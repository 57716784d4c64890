"""The sandbox clusters on loopback, for demos and tests: real ZooKeeper + Kafka 3.9 brokers
(`SandboxCluster`), and real KRaft controllers + Kafka 4 brokers (`KRaftSandbox`)."""

from kafka_ops.jars.fetch import ensure_jars, ensure_kafka4_jars, var_dir
from sandbox.cluster import SandboxCluster, attach
from sandbox.kraft import KRaftSandbox, attach_kraft

__all__ = [
    "KRaftSandbox",
    "SandboxCluster",
    "attach",
    "attach_kraft",
    "ensure_jars",
    "ensure_kafka4_jars",
    "var_dir",
]
