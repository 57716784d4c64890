"""The sandbox cluster: real ZooKeeper + Kafka 3.9 brokers on loopback, for demos and tests."""

from kafka_ops.sandbox.cluster import SandboxCluster, attach
from kafka_ops.sandbox.jars import ensure_jars, var_dir

__all__ = ["SandboxCluster", "attach", "ensure_jars", "var_dir"]
