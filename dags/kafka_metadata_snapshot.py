"""Snapshot every watched Kafka cluster's metadata into the lake, on a heartbeat schedule and within
seconds of a change its controller notices.

Declares and wires only: the work lives in `kafka_ops` (hook, collector, lake), imported inside the
tasks, so parsing this file opens no connection. Parsing reads the settings (file and environment) for
the clusters to snapshot, one mapped task instance and one asset watcher each (their triggers connect
only in the triggerer): a run starts on its snapshots at once, with no task hop to list them first.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import AssetOrTimeSchedule, CronTriggerTimetable, dag, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException
from airflow.utils.trigger_rule import TriggerRule

from kafka_ops.airflow.assets import GROUP_SNAPSHOT_ASSET, SNAPSHOT_ASSET
from kafka_ops.airflow.cluster_watch import cluster_changes_asset
from kafka_ops.errors import ConfigError
from kafka_ops.settings import ClusterConfig, Settings, load_settings, snapshot_schedule

DAG_ID = "kafka_metadata_snapshot"

DOC_MD = """
### Kafka metadata snapshot

**What it does.** For every cluster in the kafka-ops settings (`$KAFKA_OPS_CONFIG`, or the one
cluster `default` when unset), reads the whole Kafka metadata (brokers, topics, partition
assignments, leaders and ISRs, controller, pending reassignments, configs) from its source:
ZooKeeper on a 3.x cluster, the Admin API and the controller quorum on a KRaft cluster (Kafka 4;
also fenced brokers, ELR and every quorum replica's lag). The setting `metadata_source` picks it;
`auto` (the default) reads ZooKeeper when the cluster's ZooKeeper connection exists, else KRaft.
It publishes the snapshot atomically to the lake at `$KAFKA_OPS_LAKE` as one snapshot. Beside
it, `collect_groups` reads every consumer group through the Admin API (state, assignor,
members and their partitions, committed offsets, end offsets, lag) and publishes them as their
own batch (asset `kafka_ops_group_snapshots`): a Kafka outage never blocks the ZooKeeper
snapshot, nor the reverse. Each
cluster is its own mapped task instance (`snapshot_cluster`, labelled with the cluster name),
so one unreachable cluster does not hide the others. Every committed snapshot updates the
asset `kafka_ops_snapshots`, which the analysis DAGs are scheduled on. Only a small summary
(counts of brokers, partitions, under-replicated and offline partitions) goes to XCom.

**Connections.** Per cluster, the Kafka connection named in the settings (`kafka_default`:
host = bootstrap servers, allowlisted security extras) and the ZooKeeper connection
(`zookeeper_default` for the default cluster): host `zk1:2181,zk2:2181`, chroot in the extra
`chroot` (or after the hosts, `zk1:2181/kafka`), optional digest login/password, extras
`timeout_s`, `use_tls`, `ca_file`, `cert_file`, `key_file`, `verify_hostname`. Unknown extras
are refused.

**Schedule.** A heartbeat, `$KAFKA_OPS_SNAPSHOT_SCHEDULE` (cron, UTC), default every 5 minutes, OR the
asset `kafka_ops_cluster_changes`, which an asset watcher per cluster updates within seconds of a
change the cluster's controller notices: on ZooKeeper, watches on `/brokers/ids`, `/controller`,
`/isr_change_notification` and `/admin/reassign_partitions`; on KRaft, a poll every 3 s of the brokers
and their fencing, the quorum's leader, epoch and voters, and a digest of every partition's leader,
ISR and ELR; on both, through the Kafka connection, the selected consumer groups without members (a
ListGroups every 3 s: a group whose consumers all stopped is collected at once, and again about two
minutes later, when Burrow's rules can rate it STOP). Each watcher runs in Airflow's **triggerer**
(without one, only the heartbeat runs), and only while this DAG is unpaused (Airflow registers an
asset's watchers for active, unpaused DAGs). The asset event's `extra.payload` says which `cluster`,
what `changes`, `first_noticed_at`, `emitted_at`. A watcher sends at most one event per 5 s (changes
inside the gap are folded into the next one); one that cannot reach its cluster retries with a backoff
(1 s doubling to 60 s), logged in the triggerer and written to `<lake>/_watch/<cluster>.json` (the
metrics page's `kafka_ops_watch_*`).

At most two runs at a time (`max_active_runs=2`), no catch-up (a missed snapshot cannot be taken in the
past). A change during a run starts a second run at once, so a run held up (a task whose Celery worker
died stays `running` until its heartbeat times out, a minute or more) never keeps a new change from
being seen; changes while two runs are active coalesce into exactly one more run: Airflow queues an
asset event for this DAG as one row per (asset, DAG) (`asset_dag_run_queue`, inserted "on conflict do
nothing"), the scheduler does not create an asset-triggered run while this DAG is at `max_active_runs`,
and when a run ends it creates one run that consumes every event queued meanwhile and deletes that row.
Every run snapshots every cluster; two runs' snapshots of a cluster are two batches, and their pages
take turns, the newer evidence winning (`alerting.dispatch`).

**When it fails.** A failed `snapshot_cluster` means *no snapshot was published* for that
cluster: its metadata could not be read at all, so downstream health checks are working from
the previous snapshot. It is never a sign the cluster itself is unhealthy. Read the task log:

* `ConfigError`, `NotAKafkaChroot` (wrong chroot), `ZooKeeperAuthFailed`: a setting is wrong;
  the task fails at once without retrying. Fix the connection or the settings file.
* `ZooKeeperUnreachable`: no ZooKeeper server answered; retried twice, 30 s apart. Check the
  ensemble and the network from the worker.
* `NotAKRaftCluster`: `metadata_source` is `kraft` (or `auto` without a ZooKeeper connection) but
  the brokers run on ZooKeeper. Fix the setting; not retried.
* `KafkaUnreachable` (KRaft): no broker answered, or the quorum has no leader; retried like
  ZooKeeper. A broker API the cluster does not serve is a collection issue, not a failure.

The clusters are the settings' when this file was last parsed (the dag-processor parses it again
within its `min_file_process_interval` of a change). Settings that cannot be read leave one task,
`read_settings`, which fails each run with their error: fix the file, and the next parse brings the
clusters back.

**Pages straight from the snapshot.** `snapshot_cluster` checks each snapshot it committed by itself,
in seconds and without Spark, before it ends (`page_from_snapshot` then repeats what it could not
deliver, and fails when a page is lost): partitions offline or under min ISR, and brokers that hold replicas but
are down (not registered; fenced on KRaft). It opens, reminds or resolves those incidents through
the cluster's notifiers at once; the analysis DAG judges the same partitions again minutes later with
the day's history (since when, which broker lags), and the newer snapshot's word wins. Likewise
`collect_groups` rates each group collection it committed by Burrow's rules over the collection's
window (its last samples and logged commits, read from the lake without Spark) and pages each group in
ERR or WARN, or resolves one that recovered, before it ends; the analysis DAG's `page_groups` judges the
same groups again with what a collection cannot say by itself (time behind, retention, transactions),
and the newer collection's word wins. A failure there is logged and left to the analysis: it never
fails the collection.

**Blind spots page.** Every attempt of each collection is recorded in the lake
(`_alerting/<cluster>.pipeline-*.json`); `report_blind_spots` pages "cannot see cluster X" through
the cluster's notifiers while a collection keeps failing, and resolves that page as soon as both
collections work again (the analysis DAG would too, minutes later).
"""


def _snapshot(cluster: dict[str, Any]) -> tuple[Any, dict[str, Any], str]:
    """One cluster's snapshot published to the lake, its summary and the lake's root; each attempt
    recorded for `report_blind_spots`. A setting a retry cannot fix fails the task at once."""
    # imported here, not at parse time: kazoo, kafka-python, pyarrow
    from kafka_ops.airflow.collection_attempts import recorded
    from kafka_ops.airflow.metadata_source import resolve, snapshot_to_lake
    from kafka_ops.airflow.zookeeper_hook import NOT_RETRYABLE
    from kafka_ops.lake.open import lake_of

    settings = load_settings()
    lake_root = settings.lake_root
    source, conn_id = resolve(cluster["metadata_source"], cluster["zookeeper_conn_id"], cluster["kafka_conn_id"])
    try:
        with recorded(lake_root, cluster["name"], source, conn_id):
            snap, info = snapshot_to_lake(settings.cluster(cluster["name"]), source, conn_id, lake_of(settings))
    except NOT_RETRYABLE as e:
        raise AirflowFailException(f"cluster {cluster['name']}: {e}") from e  # a retry cannot fix it
    return snap, info, lake_root


def _page_at_once(cluster: str, snapshot_id: str) -> dict[str, Any]:
    from kafka_ops.airflow.snapshot_paging import page_at_once

    return page_at_once(cluster, snapshot_id, DAG_ID, get_current_context()["run_id"])


def _page_groups_at_once(cluster: str, group_snapshot_id: str) -> dict[str, Any]:
    from kafka_ops.airflow.snapshot_paging import page_groups_at_once

    return page_groups_at_once(cluster, group_snapshot_id, DAG_ID, get_current_context()["run_id"])


def _task_args(cluster: ClusterConfig) -> dict[str, str | None]:
    """What a cluster's mapped task instances need of its settings (JSON: they are the DAG's)."""
    return {
        "name": cluster.name,
        "zookeeper_conn_id": cluster.zookeeper_conn_id,
        "kafka_conn_id": cluster.kafka_conn_id,
        "metadata_source": cluster.metadata_source,
        "controller_bootstrap_servers": cluster.controller_bootstrap_servers,
        "groups_include": cluster.groups_include,
        "groups_exclude": cluster.groups_exclude,
    }


def _parse_settings() -> tuple[Settings | None, str]:
    """The settings as this parse reads them, or why they cannot be read."""
    try:
        return load_settings(), ""
    except ConfigError as e:
        return None, str(e)


SETTINGS, SETTINGS_ERROR = _parse_settings()
CLUSTERS = [_task_args(c) for c in SETTINGS.clusters] if SETTINGS is not None else []


def _event_extra(cluster: str, snapshot_id: str, lake_root: str) -> dict[str, str]:
    """What an asset event tells its consumers: exactly which batch was committed, and where."""
    return {"cluster": cluster, "snapshot_id": snapshot_id, "lake_root": lake_root}


@dag(
    dag_id=DAG_ID,
    schedule=AssetOrTimeSchedule(
        timetable=CronTriggerTimetable(snapshot_schedule(), timezone="UTC"),
        assets=cluster_changes_asset(SETTINGS),
    ),
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=2,
    tags=["kafka-ops", "snapshot"],
    doc_md=DOC_MD,
    default_args={
        "retries": 2,
        "retry_delay": timedelta(seconds=30),
        "execution_timeout": timedelta(minutes=10),
    },
)
def kafka_metadata_snapshot() -> None:
    if SETTINGS is None:

        @task(retries=0)  # a retry cannot help: only the next parse reads the settings again
        def read_settings() -> None:
            """Fail with the settings' error: nothing is snapshotted while they cannot be read."""
            load_settings()  # raises the error as it stands now
            raise AirflowFailException(
                f"the settings could not be read when this DAG was parsed ({SETTINGS_ERROR}); they read now: "
                "the next parse snapshots their clusters"
            )

        read_settings()
        return

    @task(outlets=[SNAPSHOT_ASSET], map_index_template="{{ task.op_kwargs['cluster']['name'] }}")
    def snapshot_cluster(cluster: dict[str, Any], *, outlet_events: Any = None) -> dict[str, Any]:
        """Snapshot one cluster into the lake and page what it shows; returns only its summary. Raises if
        nothing was published."""
        snap, info, lake_root = _snapshot(cluster)
        outlet_events[SNAPSHOT_ASSET].extra = _event_extra(snap.cluster, snap.snapshot_id, lake_root)
        info["paged"] = _page_at_once(snap.cluster, snap.snapshot_id)
        return info

    @task(outlets=[GROUP_SNAPSHOT_ASSET], map_index_template="{{ task.op_kwargs['cluster']['name'] }}")
    def collect_groups(cluster: dict[str, Any], *, outlet_events: Any = None) -> dict[str, Any]:
        """Collect one cluster's consumer groups (Admin API) into the lake; returns only a summary.
        Independent of the ZooKeeper snapshot: either can fail without blocking the other."""
        from kafka_ops.airflow.collection_attempts import recorded
        from kafka_ops.airflow.kafka_hook import KafkaAdminHook
        from kafka_ops.errors import ConfigError
        from kafka_ops.lake.open import lake_of

        settings = load_settings()
        lake_root = settings.lake_root
        try:
            with recorded(lake_root, cluster["name"], "Kafka", cluster["kafka_conn_id"]):
                snap, info = KafkaAdminHook(cluster["kafka_conn_id"]).collect_groups(
                    cluster["name"], lake_of(settings), cluster["groups_include"], cluster["groups_exclude"]
                )
        except ConfigError as e:
            raise AirflowFailException(f"cluster {cluster['name']}: {e}") from e  # a retry cannot fix it
        outlet_events[GROUP_SNAPSHOT_ASSET].extra = _event_extra(snap.cluster, snap.snapshot_id, lake_root)
        info["paged"] = _page_groups_at_once(snap.cluster, snap.snapshot_id)
        return info

    @task(map_index_template="{{ task.op_kwargs['snapshot']['cluster'] }}")
    def page_from_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
        """Page (or resolve) what the snapshot shows by itself: offline and under-min-ISR partitions,
        brokers down. `snapshot_cluster` already did, at once; this repeats what it could not deliver
        (nothing, usually: the same snapshot judged again is silent) and fails visibly when a page is lost."""
        from kafka_ops.airflow.snapshot_paging import page_from_snapshot

        run_id = get_current_context()["run_id"]
        return page_from_snapshot(snapshot["cluster"], snapshot["snapshot_id"], datetime.now(UTC), DAG_ID, run_id)

    @task(trigger_rule=TriggerRule.ALL_DONE, map_index_template="{{ task.op_kwargs['cluster']['name'] }}")
    def report_blind_spots(cluster: dict[str, Any]) -> dict[str, Any]:
        """Page "cannot see cluster X" while a collection keeps failing (its other incidents are held,
        not resolved), then fail so the run does; when both collections worked, resolve that page."""
        from kafka_ops.airflow.snapshot_paging import page_blind_spots

        paged = page_blind_spots(cluster["name"], DAG_ID, get_current_context()["run_id"])
        if paged["blind"]:  # the run must fail (a failed collection is a pipeline error): this is its last task
            raise AirflowFailException(
                f"cannot see cluster {cluster['name']}: {paged['causes']}; paged: {paged['opened']}"
            )
        return paged

    snapshots = snapshot_cluster.expand(cluster=CLUSTERS)
    page_from_snapshot.expand(snapshot=snapshots)
    collected = [snapshots, collect_groups.expand(cluster=CLUSTERS)]
    collected >> report_blind_spots.expand(cluster=CLUSTERS)


kafka_metadata_snapshot()
