"""The Prometheus JMX exporter as a sandbox broker's Java agent: the broker's own JMX gauges
(UnderReplicatedPartitions, OfflinePartitionsCount, ...) served over HTTP on loopback, as most Kafka
deployments expose them to Prometheus. Rules: `jmx_exporter.yaml`."""

from __future__ import annotations

from pathlib import Path

from kafka_ops.jars.fetch import ensure_jmx_exporter_jar

RULES = Path(__file__).with_name("jmx_exporter.yaml")
URP_GAUGE = "kafka_server_replicamanager_underreplicatedpartitions"
"""A broker's count of the partitions it leads with an ISR smaller than their replicas, as the agent names it."""


def agent_options(port: int) -> list[str]:
    """The JVM option that serves a broker's gauges at http://127.0.0.1:`port`/metrics."""
    return [f"-javaagent:{ensure_jmx_exporter_jar()}=127.0.0.1:{port}:{RULES}"]
