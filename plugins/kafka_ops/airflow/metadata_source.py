"""Which source a cluster's metadata snapshot reads from (`ClusterConfig.metadata_source`), resolved
at run time so one snapshot DAG serves a fleet of ZooKeeper and KRaft clusters unchanged."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from airflow.sdk.bases.hook import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

if TYPE_CHECKING:
    from typing import Any

    from kafka_ops.airflow.kafka_hook import KafkaAdminHook
    from kafka_ops.airflow.zookeeper_hook import ZooKeeperHook
    from kafka_ops.lake.store import Lake
    from kafka_ops.model.cluster import ClusterSnapshot
    from kafka_ops.settings import ClusterConfig
    from kafka_ops.sources.admin import AdminFactory
    from kafka_ops.sources.migration import MigrationWatch

log = logging.getLogger(__name__)

Source = Literal["ZooKeeper", "KRaft"]


def connection_exists(conn_id: str) -> bool:
    try:
        BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return False
    return True


def resolve(metadata_source: str, zookeeper_conn_id: str, kafka_conn_id: str) -> tuple[Source, str]:
    """A cluster's source (its `ClusterConfig` fields) and the Airflow connection it reads through.
    `auto`: ZooKeeper when the cluster's ZooKeeper connection exists, else KRaft."""
    if metadata_source == "auto":
        metadata_source = "zookeeper" if connection_exists(zookeeper_conn_id) else "kraft"
    if metadata_source == "zookeeper":
        return "ZooKeeper", zookeeper_conn_id
    return "KRaft", kafka_conn_id


def metadata_hook(source: Source, conn_id: str) -> ZooKeeperHook | KafkaAdminHook:
    """The hook whose `snapshot_to_lake` reads that source."""
    from kafka_ops.airflow.kafka_hook import KafkaAdminHook  # noqa: PLC0415 - kafka-python only when used
    from kafka_ops.airflow.zookeeper_hook import ZooKeeperHook  # noqa: PLC0415 - kazoo only when used

    return ZooKeeperHook(conn_id) if source == "ZooKeeper" else KafkaAdminHook(conn_id)


def snapshot_to_lake(
    config: ClusterConfig, source: Source, conn_id: str, lake: Lake
) -> tuple[ClusterSnapshot, dict[str, Any]]:
    """One cluster's metadata snapshot published to `lake`, as the snapshot DAG takes it (and a plan
    is made from): through `metadata_hook(source, conn_id)`; a ZooKeeper one also watches a migration
    and reads the brokers' log dirs through the cluster's Kafka connection; with a `probe_topic`, each
    broker is probed through it; the summary weighs disk use against the cluster's capacities."""
    from kafka_ops.airflow.kafka_hook import KafkaAdminHook  # noqa: PLC0415 - kafka-python only when used
    from kafka_ops.sources.probe import ProbeRequest  # noqa: PLC0415

    hook = metadata_hook(source, conn_id)
    probe = ProbeRequest(config.probe_topic, config.writes_enabled) if config.probe_topic else None
    if isinstance(hook, KafkaAdminHook):
        return hook.snapshot_to_lake(config.name, lake, capacities=config.capacity, probe=probe)
    watch = migration_watch(config.controller_bootstrap_servers, config.kafka_conn_id)
    brokers = brokers_beside_zookeeper(config.kafka_conn_id)
    return hook.snapshot_to_lake(config.name, lake, watch, brokers, capacities=config.capacity, probe=probe)


def migration_watch(controller_bootstrap_servers: str | None, kafka_conn_id: str) -> MigrationWatch:
    """What a ZooKeeper snapshot also asks while the cluster migrates to KRaft: its controllers (when
    the cluster names them) and its brokers through the Kafka connection (when that exists)."""
    from kafka_ops.airflow.kafka_hook import KafkaAdminHook  # noqa: PLC0415 - kafka-python only when used
    from kafka_ops.sources.migration import MigrationWatch  # noqa: PLC0415

    factory = KafkaAdminHook(kafka_conn_id).target() if connection_exists(kafka_conn_id) else None
    return MigrationWatch(controller_bootstrap_servers, factory)


def brokers_beside_zookeeper(kafka_conn_id: str) -> AdminFactory | None:
    """The brokers a ZooKeeper snapshot reads its log dirs from: the cluster's Kafka connection with
    its timeouts cut to a few seconds (`log_dirs.BESIDE_ZOOKEEPER_TIMEOUT_S`), so a Kafka outage costs
    the snapshot that much and its load rows, never the snapshot. None (logged) when the cluster has
    no Kafka connection."""
    from kafka_ops.airflow.kafka_hook import KafkaAdminHook  # noqa: PLC0415 - kafka-python only when used
    from kafka_ops.sources import log_dirs  # noqa: PLC0415

    if not connection_exists(kafka_conn_id):
        log.warning("no connection %r: this ZooKeeper snapshot has no log dirs or replica sizes", kafka_conn_id)
        return None
    target = KafkaAdminHook(kafka_conn_id).target()
    return replace(target, options=log_dirs.bounded(target.options))
