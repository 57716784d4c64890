"""Every lake table's schema, in one place.

Layout: `<root>/<table>/cluster=<cluster>/dt=<YYYY-MM-DD>/<batch id>.parquet`. `cluster` and
`dt` live only in the directory names (Hive partitioning), never inside the files, so Spark
and pyarrow both read them as partition columns; read them as strings (Spark:
`spark.sql.sources.partitionColumnTypeInference.enabled=false`, which `lake.spark` sets).

Every row carries `snapshot_id` and `captured_at`. Snapshot tables come in two batches, each
published on its own (so a Kafka outage never blocks ZooKeeper snapshots, nor the reverse)
with its own commit log: ZooKeeper metadata (`METADATA_TABLES`, committed by `snapshots`) and
consumer groups (`GROUP_TABLES`, committed by `group_snapshots`). A snapshot exists for
readers only once its commit row is there (see `lake.store`). Findings are committed by
`analysis_runs`; integrity validations of snapshot batches by `snapshot_validations`.
"""

from __future__ import annotations

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")
INTS = pa.list_(pa.int32())

PARTITION_COLUMNS = ("cluster", "dt")

_KEY = [
    pa.field("snapshot_id", pa.string(), nullable=False),
    pa.field("captured_at", TS, nullable=False),
]


def _schema(*fields: pa.Field, doc: str) -> pa.Schema:
    return pa.schema([*_KEY, *fields], metadata={"doc": doc})


METADATA_TABLES: dict[str, pa.Schema] = {
    "snapshots": _schema(
        pa.field("completed_at", TS),
        pa.field("source", pa.string()),
        pa.field("zookeeper", pa.string()),
        pa.field("bootstrap_servers", pa.string()),
        pa.field("kafka_cluster_id", pa.string()),
        pa.field("zxid_start", pa.int64()),
        pa.field("zxid_end", pa.int64()),
        pa.field("broker_count", pa.int32()),
        pa.field("topic_count", pa.int32()),
        pa.field("partition_count", pa.int32()),
        pa.field("under_replicated_count", pa.int32()),
        pa.field("offline_count", pa.int32()),
        pa.field("controller_id", pa.int32()),
        pa.field("controller_epoch", pa.int32()),
        pa.field("issue_count", pa.int32()),
        pa.field("collector_version", pa.string()),
        pa.field("metadata_version", pa.int32()),
        doc="Commit log: one row per published snapshot, with its headline figures. source is "
        "zookeeper (znodes, Kafka 3.x) or kraft (Admin API and controller quorum): on kraft, zookeeper "
        "and the zxids are null, controller_id is the quorum leader and controller_epoch its leader "
        "epoch, metadata_version the finalized metadata.version level. Null source: written before "
        "sources existed (zookeeper).",
    ),
    "brokers": _schema(
        pa.field("broker_id", pa.int32(), nullable=False),
        pa.field("host", pa.string()),
        pa.field("port", pa.int32()),
        pa.field("endpoints", pa.list_(pa.string())),
        pa.field("rack", pa.string()),
        pa.field("jmx_port", pa.int32()),
        pa.field("registered_at", TS),
        pa.field("broker_epoch", pa.int64()),
        pa.field("znode_version", pa.int32()),
        pa.field("cordoned", pa.bool_()),
        doc="Brokers that can serve: registered (/brokers/ids/<id>; broker_epoch is the znode's czxid); "
        "on kraft, DescribeCluster's unfenced brokers (fenced ones are in fenced_brokers), with "
        "endpoints, jmx_port, registered_at, broker_epoch and znode_version null (the Admin API does "
        "not tell them). cordoned (kraft): Kafka places no new replica on the broker (KIP-1066: its "
        "cordoned.log.dirs, static or dynamic, is * or names every log dir); null on zookeeper, when "
        "its configs could not be read, and in files written before the column existed.",
    ),
    "partitions": _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("topic_id", pa.string()),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replicas", INTS),
        pa.field("adding_replicas", INTS),
        pa.field("removing_replicas", INTS),
        pa.field("has_state", pa.bool_()),
        pa.field("leader", pa.int32()),
        pa.field("leader_epoch", pa.int32()),
        pa.field("controller_epoch", pa.int32()),
        pa.field("isr", INTS),
        pa.field("leader_recovery_state", pa.int32()),
        pa.field("state_version", pa.int32()),
        pa.field("state_mzxid", pa.int64()),
        pa.field("state_mtime", TS),
        pa.field("elr", INTS),
        pa.field("last_known_elr", INTS),
        pa.field("offline_replicas", INTS),
        pa.field("remote_storage", pa.bool_()),
        pa.field("local_retention_ms", pa.int64()),
        pa.field("local_retention_bytes", pa.int64()),
        pa.field("log_start_offset", pa.int64()),
        pa.field("local_log_start_offset", pa.int64()),
        pa.field("tiered_end_offset", pa.int64()),
        pa.field("end_offset", pa.int64()),
        pa.field("copy_backlog", pa.int64()),
        doc="Assignment (/brokers/topics/<t>) joined with leader/ISR state and its znode stat; "
        "state_version is the partition epoch (rises on every leader/ISR change). On kraft: from "
        "DescribeTopicPartitions, with elr / last_known_elr (KIP-966, null when ELR is off) and "
        "offline_replicas; controller_epoch, leader_recovery_state and the znode stat are null. "
        "Tiered storage (KIP-405, see sources.tiered): remote_storage is the topic's remote.storage.enable "
        "(null: its configs could not be read, and in files written before the column existed). For "
        "remote-storage topics only (null otherwise: not applicable), local_retention_ms / _bytes are the "
        "effective local.retention.* (-2: the topic's retention.*, -1: unlimited) and, from the leader's "
        "ListOffsets, log_start_offset (earliest, remote included), local_log_start_offset (earliest-local, "
        "v8+), tiered_end_offset (latest-tiered, v9+: the last offset in remote storage, -1 while none is) "
        "and end_offset (the high watermark); copy_backlog = end_offset - max(tiered_end_offset + 1, "
        "local_log_start_offset): offsets only in the local log, the active segment included. Null where "
        "unknown: a broker that does not serve the spec (a collection issue of kind unsupported), a refused "
        "or failed request (kind request), no leader. The local part's bytes are replica_sizes.size_bytes "
        "(DescribeLogDirs counts local segments only); the Admin API tells no remote size.",
    ),
    "controller": _schema(
        pa.field("controller_id", pa.int32()),
        pa.field("elected_at", TS),
        pa.field("controller_czxid", pa.int64()),
        pa.field("kraft_controller_epoch", pa.int32()),
        pa.field("controller_epoch", pa.int32()),
        pa.field("controller_epoch_mzxid", pa.int64()),
        doc="One row per snapshot: /controller (null id when none) and /controller_epoch. On kraft: "
        "the quorum leader (DescribeQuorum, never DescribeCluster's controller id, which a KRaft "
        "broker fills with a random live broker) and its leader epoch in both epoch columns.",
    ),
    "isr_change_notifications": _schema(
        pa.field("notification", pa.string(), nullable=False),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("created_at", TS),
        doc="/isr_change_notification/* (only written by brokers on IBP < 2.7).",
    ),
    "log_dir_events": _schema(
        pa.field("notification", pa.string(), nullable=False),
        pa.field("broker_id", pa.int32()),
        pa.field("event", pa.int32()),
        pa.field("created_at", TS),
        doc="/log_dir_event_notification/* (event 1 = log directory failure).",
    ),
    "reassignments": _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replicas", INTS),
        pa.field("target_replicas", INTS),
        pa.field("adding_replicas", INTS),
        pa.field("removing_replicas", INTS),
        pa.field("requested_in_znode", pa.bool_()),
        doc="Partitions being reassigned: from the topic znode's adding/removing replicas and "
        "from /admin/reassign_partitions (requested_in_znode).",
    ),
    "admin_requests": _schema(
        pa.field("request", pa.string(), nullable=False),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        doc="Pending admin requests: preferred_replica_election (per partition) and "
        "delete_topic (/admin/delete_topics/<t>).",
    ),
    "configs": _schema(
        pa.field("entity_type", pa.string(), nullable=False),
        pa.field("entity_name", pa.string(), nullable=False),
        pa.field("config_key", pa.string(), nullable=False),
        pa.field("config_value", pa.string()),
        doc="Dynamic config overrides (/config/topics, /config/brokers); secret values hidden.",
    ),
    "quorum": _schema(
        pa.field("replica_id", pa.int32(), nullable=False),
        pa.field("role", pa.string()),
        pa.field("directory_id", pa.string()),
        pa.field("log_end_offset", pa.int64()),
        pa.field("lag", pa.int64()),
        pa.field("last_fetch_at", TS),
        pa.field("last_caught_up_at", TS),
        pa.field("is_leader", pa.bool_()),
        pa.field("leader_id", pa.int32()),
        pa.field("leader_epoch", pa.int32()),
        pa.field("high_watermark", pa.int64()),
        doc="KRaft only: every replica of the metadata log (DescribeQuorum), voters (controllers) and "
        "observers (brokers); lag is offsets behind the leader's log end. Empty on zookeeper.",
    ),
    "fenced_brokers": _schema(
        pa.field("broker_id", pa.int32(), nullable=False),
        pa.field("host", pa.string()),
        pa.field("port", pa.int32()),
        pa.field("rack", pa.string()),
        doc="KRaft only: brokers registered with the controller but fenced (stopped, or not keeping up "
        "their heartbeats): no leaderships, out of every ISR. Empty on zookeeper.",
    ),
    "migration": _schema(
        pa.field("phase", pa.string(), nullable=False),
        pa.field("kraft_controller_id", pa.int32()),
        pa.field("kraft_controller_epoch", pa.int32()),
        pa.field("kraft_metadata_offset", pa.int64()),
        pa.field("kraft_metadata_epoch", pa.int32()),
        pa.field("zookeeper_written_at", TS),
        pa.field("zookeeper_writes_stopped", pa.bool_()),
        pa.field("zookeeper_brokers", pa.list_(pa.int32())),
        pa.field("kraft_brokers", pa.list_(pa.int32())),
        pa.field("waiting_brokers", pa.list_(pa.int32())),
        pa.field("zookeeper_lag", pa.int64()),
        pa.field("divergences", pa.int32()),
        doc="ZooKeeper clusters migrating to KRaft (one row per snapshot with a /migration znode; see "
        "sources.migration): phase pre_migration, dual_write or post_migration; the /migration znode's "
        "fields, zookeeper_written_at its mtime (the controllers' last write to ZooKeeper); brokers still "
        "on ZooKeeper, brokers already on KRaft and (pre_migration) brokers the controllers wait for, "
        "zookeeper_lag the metadata records ZooKeeper has not received, divergences the partition fields "
        "ZooKeeper and the KRaft metadata disagree on. kraft_brokers, waiting_brokers and zookeeper_lag "
        "are null when the controllers were not asked (no controller_bootstrap_servers), divergences "
        "when the brokers were not.",
    ),
    "migration_divergences": _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32()),
        pa.field("field", pa.string(), nullable=False),
        pa.field("zookeeper", pa.string()),
        pa.field("kraft", pa.string()),
        doc="While a cluster migrates: each topic (partition null: present on one side only) and partition "
        "field (replicas, leader, isr, leader_epoch) on which ZooKeeper and the KRaft metadata the brokers "
        "serve disagree, with both values (null: absent).",
    ),
    "collection_issues": _schema(
        pa.field("path", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("problem", pa.string()),
        doc="Znodes that could not be read or parsed, or Admin API requests that failed (kind request, "
        "unsupported; kind log_dir: a log dir a broker reports in error, path `DescribeLogDirs broker <id> "
        "log dir <dir>`); the rest of the snapshot is still there.",
    ),
    "quotas": _schema(
        pa.field("entity_path", pa.string(), nullable=False),
        pa.field("user", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("ip", pa.string()),
        pa.field("quota_key", pa.string(), nullable=False),
        pa.field("quota_value", pa.float64(), nullable=False),
        doc="Client quotas (/config/clients, /config/users[/clients], /config/ips), one row per quota key; "
        "user/client_id/ip desanitized ('<default>' for the default entity). SCRAM credentials are never read.",
    ),
    "acls": _schema(
        pa.field("resource_type", pa.string(), nullable=False),
        pa.field("pattern_type", pa.string(), nullable=False),
        pa.field("resource_name", pa.string(), nullable=False),
        pa.field("allow_count", pa.int32()),
        pa.field("deny_count", pa.int32()),
        pa.field("principal_count", pa.int32()),
        doc="ACLs per resource pattern (/kafka-acl, /kafka-acl-extended/prefixed), counted: no principal names.",
    ),
    "config_changes": _schema(
        pa.field("notification", pa.string(), nullable=False),
        pa.field("entity_path", pa.string(), nullable=False),
        pa.field("created_at", TS),
        doc="Pending /config/changes notifications (brokers purge them after 15 minutes).",
    ),
    "features": _schema(
        pa.field("status", pa.int32()),
        pa.field("feature", pa.string()),
        pa.field("levels", pa.map_(pa.string(), pa.int32())),
        doc="/feature: status (1 = feature versioning enabled) and one row per finalized feature with its "
        "version levels; one row with feature null when none is finalized; no row without a /feature znode. "
        "On kraft: ApiVersions' finalized features, status null (KRaft always versions features).",
    ),
    "log_dirs": _schema(
        pa.field("broker_id", pa.int32(), nullable=False),
        pa.field("log_dir", pa.string(), nullable=False),
        pa.field("error", pa.string()),
        pa.field("total_bytes", pa.int64()),
        pa.field("usable_bytes", pa.int64()),
        doc="DescribeLogDirs of every serving broker (the Admin API, on both kinds of cluster): one row per "
        "log dir. error: the broker's error for the dir (e.g. KAFKA_STORAGE_ERROR for an offline dir), null "
        "when healthy. total_bytes / usable_bytes: the dir's volume size and free bytes (KIP-827, brokers "
        "3.3+); null where the broker does not report them. A broker that did not answer has no row and a "
        "collection issue.",
    ),
    "replica_sizes": _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("broker_id", pa.int32(), nullable=False),
        pa.field("log_dir", pa.string(), nullable=False),
        pa.field("size_bytes", pa.int64(), nullable=False),
        pa.field("offset_lag", pa.int64()),
        pa.field("is_future", pa.bool_()),
        doc="DescribeLogDirs: every replica's size on disk, per broker and log dir. offset_lag: how far the "
        "replica's log end is behind the high watermark (future replicas: behind the current one); "
        "is_future: a replica being moved between log dirs (AlterReplicaLogDirs), counted on both dirs "
        "while it moves.",
    ),
    "probe_results": _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("leader", pa.int32()),
        pa.field("produce_ms", pa.float64()),
        pa.field("e2e_ms", pa.float64()),
        pa.field("error", pa.string()),
        doc="The end-to-end probe: one record produced with acks=all to each partition of the cluster's probe "
        "topic, and read back. leader: the broker probed (the partition's leader in this snapshot); "
        "produce_ms: to the produce's acknowledgement, e2e_ms: to the record read back (null where that step "
        "failed); error: what Kafka answered, or the step that timed out (null: both succeeded). No rows: "
        "the cluster is not probed (no probe_topic), or the probe topic is missing (a collection issue).",
    ),
}

COMMIT_TABLE = "snapshots"
DELETE_TOPIC = "delete_topic"
"""The `admin_requests` request of a topic pending deletion (`/admin/delete_topics/<t>`)."""
GROUP_COMMIT_TABLE = "group_snapshots"

TOPIC_PARTITION = pa.struct([pa.field("topic", pa.string()), pa.field("partition", pa.int32())])
STREAMS_TASK = pa.struct(
    [pa.field("kind", pa.string()), pa.field("subtopology", pa.string()), pa.field("partition", pa.int32())]
)

GROUP_TABLES: dict[str, pa.Schema] = {
    GROUP_COMMIT_TABLE: _schema(
        pa.field("completed_at", TS),
        pa.field("bootstrap_servers", pa.string()),
        pa.field("group_count", pa.int32()),
        pa.field("member_count", pa.int32()),
        pa.field("offset_count", pa.int32()),
        pa.field("partition_count", pa.int32()),
        pa.field("total_lag", pa.int64()),
        pa.field("issue_count", pa.int32()),
        pa.field("collector_version", pa.string()),
        pa.field("reconciling_member_count", pa.int32()),
        doc="Commit log of group collections (Admin API): one row per published collection; "
        "partition_count counts partition_end_offsets rows, total_lag sums known lags, "
        "reconciling_member_count counts consumer-protocol members whose assignment is not yet their "
        "target (null in collections from before group types were collected).",
    ),
    "consumer_groups": _schema(
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("state", pa.string()),
        pa.field("protocol_type", pa.string()),
        pa.field("assignor", pa.string()),
        pa.field("member_count", pa.int32()),
        pa.field("group_type", pa.string()),
        pa.field("group_epoch", pa.int32()),
        pa.field("assignment_epoch", pa.int32()),
        pa.field("reconciling_member_count", pa.int32()),
        pa.field("topology_epoch", pa.int32()),
        pa.field("coordinator_id", pa.int32()),
        doc="One row per described group (coordinator_id: the broker coordinating it, null when unknown and "
        "in collections from before it was kept). group_type (ListGroups v5): 'classic' (DescribeGroups) or "
        "'consumer' (KIP-848, ConsumerGroupDescribe), 'share' (KIP-932, ShareGroupDescribe) or "
        "'streams' (KIP-1071, StreamsGroupDescribe); null in collections from before types were "
        "collected, which were all classic. "
        "Classic: state Stable, Empty, PreparingRebalance, CompletingRebalance or Dead, protocol type "
        "('consumer'; '' for groups that only commit offsets), assignor (the selected client protocol, "
        "e.g. 'range'; '' when no generation is active). Consumer: state Stable, Empty, Assigning, "
        "Reconciling or Dead, protocol_type 'consumer', assignor the broker's (uniform, range). "
        "Share: state Stable, Empty or Dead, protocol_type 'share', assignor 'simple'. Streams: state "
        "Stable, Empty, Assigning, Reconciling, NotReady or Dead, protocol_type 'streams', assignor the "
        "broker's task assignor (sticky), assignment_epoch its target assignment epoch, topology_epoch "
        "(streams groups only). group_epoch, assignment_epoch and reconciling_member_count exist for "
        "consumer, share and streams groups (null for classic ones, which have no epochs and no target "
        "assignment; a share member has no target, so it never reconciles).",
    ),
    "group_members": _schema(
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("member_id", pa.string(), nullable=False),
        pa.field("group_instance_id", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("host", pa.string()),
        pa.field("assigned_partitions", pa.list_(TOPIC_PARTITION)),
        pa.field("subscription", pa.binary()),
        pa.field("member_epoch", pa.int32()),
        pa.field("rack", pa.string()),
        pa.field("subscribed_topics", pa.list_(pa.string())),
        pa.field("subscribed_regex", pa.string()),
        pa.field("target_partitions", pa.list_(TOPIC_PARTITION)),
        pa.field("reconciling", pa.bool_()),
        pa.field("process_id", pa.string()),
        pa.field("tasks", pa.list_(STREAMS_TASK)),
        pa.field("target_tasks", pa.list_(STREAMS_TASK)),
        doc="Members and what they hold (assigned_partitions, list<struct<topic, partition>>, sorted). "
        "Classic groups: the decoded assignment, empty unless the group is Stable and speaks the "
        "consumer protocol; subscription: the member's consumer-protocol metadata bytes as sent in "
        "its last JoinGroup (null for other protocols); the consumer-protocol columns are null. "
        "Consumer groups (KIP-848): assigned_partitions is the current assignment, target_partitions "
        "what the broker's assignor wants the member to hold, reconciling = they differ; member_epoch, "
        "rack, subscribed_topics (sorted) or subscribed_regex as the broker keeps them; subscription "
        "is null (the broker keeps no JoinGroup metadata). Share groups: assigned_partitions, "
        "member_epoch, rack and subscribed_topics; target_partitions null. Streams groups: tasks and "
        "target_tasks (list<struct<kind active|standby|warmup, subtopology, partition>>), process_id; "
        "assigned_partitions and target_partitions are the input partitions of the active tasks; "
        "reconciling = tasks differ from target_tasks (standby and warmup included).",
    ),
    "group_offsets": _schema(
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("committed_offset", pa.int64()),
        pa.field("end_offset", pa.int64()),
        pa.field("lag", pa.int64()),
        pa.field("no_commit", pa.bool_()),
        pa.field("committed_above_end", pa.bool_()),
        pa.field("topic_deleted", pa.bool_()),
        pa.field("start_offset", pa.int64()),
        pa.field("record_timestamp", TS),
        pa.field("record_timestamp_type", pa.string()),
        pa.field("read_committed_lag", pa.int64()),
        doc="One row per committed or assigned partition of each group. lag = end_offset - "
        "committed_offset, clamped at 0 when committed_above_end; null when no_commit, "
        "topic_deleted (topic or partition gone) or the end offset is unknown. A share group "
        "(KIP-932) commits no offsets: its rows are DescribeShareGroupOffsets', one per partition it "
        "has state on, committed_offset null, no_commit false, start_offset the share-partition start "
        "offset and lag the broker's own (records not yet acknowledged); start_offset is null for "
        "every other group type. record_timestamp: the time of the first unconsumed record (the first "
        "record at or after committed_offset), read when lag > 0, record_timestamp_type 'CreateTime' "
        "or 'LogAppendTime' (null when unread: no lag, offset deleted, a read failure: a collection "
        "issue says which). read_committed_lag = last_stable_offset - committed_offset, clamped at 0: "
        "the lag of a read_committed consumer (equal to lag unless a transaction is open).",
    ),
    "group_commits": _schema(
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("committed_offset", pa.int64()),
        pa.field("committed_at", TS, nullable=False),
        doc="Offset commits as the group coordinator logged them in __consumer_offsets, each with the "
        "time it was added (committed_at), read from the collection before on (the last 20 of each "
        "partition of a read, oldest first): what Burrow's rules evaluate. committed_offset null is the "
        "offset's deletion. Consecutive collections may both hold a commit; (group_id, topic, partition, "
        "committed_at, committed_offset) identifies it. Share groups commit nothing; no rows before the "
        "commit log was read.",
    ),
    "partition_end_offsets": _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("end_offset", pa.int64(), nullable=False),
        pa.field("last_stable_offset", pa.int64()),
        pa.field("log_start_offset", pa.int64()),
        doc="Log end offset (high watermark) of every partition of the topics the groups refer to; with "
        "captured_at, the (end offset, time) history that lag in time interpolates on. last_stable_offset: "
        "ListOffsets read_committed, below end_offset while a transaction is open on the partition (null "
        "when it could not be read). log_start_offset: ListOffsets earliest, the partition's first offset "
        "(remote storage included), above 0 once retention or DeleteRecords removed records (null when it "
        "could not be read, and in collections from before it was read).",
    ),
    "open_transactions": _schema(
        pa.field("transactional_id", pa.string()),
        pa.field("producer_id", pa.int64()),
        pa.field("producer_epoch", pa.int32()),
        pa.field("state", pa.string()),
        pa.field("coordinator_id", pa.int32()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("start_time", TS),
        pa.field("timeout_ms", pa.int64()),
        pa.field("start_offset", pa.int64()),
        pa.field("hanging", pa.bool_()),
        doc="Open transactions, one row per (transaction, partition): ListTransactions on every broker, "
        "DescribeTransactions at each coordinator (id, producer id/epoch, state, start time, timeout), "
        "DescribeProducers at the partitions' leaders (start_offset: the first offset of the open "
        "transaction on the partition, which pins its last stable offset). hanging: a leader holds an "
        "open transaction on the partition that no coordinator has as ongoing there (transactional_id, "
        "state and start_time null when no coordinator knows the producer); partitions the groups read "
        "are checked. The commands to abort one are in docs/operations.md.",
    ),
    "group_collection_issues": _schema(
        pa.field("group_id", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("problem", pa.string()),
        doc="What a group collection could not read (a group's description or offsets, end "
        "offsets of a leaderless partition); group_id is null for cluster-wide problems.",
    ),
}

SNAPSHOT_TABLES: dict[str, pa.Schema] = {**METADATA_TABLES, **GROUP_TABLES}

ANALYSIS_COMMIT_TABLE = "analysis_runs"
ANALYSIS_RUNS = _schema(
    pa.field("analysed_at", TS),
    pa.field("source", pa.string()),
    pa.field("detectors", pa.list_(pa.string())),
    pa.field("findings", pa.string()),
    doc="Commit log of findings: one row per analysed batch. `snapshot_id`/`captured_at` are "
    "the analysed batch's, from the commit log named in `source` (`snapshots` for the ZooKeeper "
    "detectors, `group_snapshots` for the consumer-group ones); `findings` is JSON "
    "{table: {severity: rows}}. Findings tables' schemas are documented by their detectors "
    "(kafka_ops.detectors.*).",
)
PARTITION_RUNS_TABLE = "partition_runs"
PARTITION_RUNS_COVERAGE_TABLE = "partition_runs_snapshots"
ANALYSIS_STATE_TABLES: dict[str, pa.Schema] = {
    PARTITION_RUNS_TABLE: _schema(
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("state_version", pa.int32()),
        pa.field("isr", INTS),
        pa.field("leader", pa.int32()),
        pa.field("replicas", INTS),
        pa.field("adding_replicas", INTS),
        pa.field("removing_replicas", INTS),
        pa.field("leader_epoch", pa.int32()),
        pa.field("first_snapshot_id", pa.string()),
        pa.field("first_at", TS),
        pa.field("last_snapshot_id", pa.string()),
        pa.field("last_at", TS),
        doc="The analysis' partition runs (kafka_ops.analysis.partition_runs), published with its findings "
        "(committed by `analysis_runs`; `snapshot_id`/`captured_at` are the analysed batch's): one row per "
        "partition and state seen in the window, with the first and last snapshot of the window that saw it. "
        "The next analysis carries them on instead of reading the window's partitions again.",
    ),
    PARTITION_RUNS_COVERAGE_TABLE: _schema(
        pa.field("covered_snapshot_id", pa.string(), nullable=False),
        pa.field("covered_at", TS),
        pa.field("window_start", TS),
        doc="The snapshots whose partitions the `partition_runs` of the same analysis hold, one row each, "
        "and the start of that analysis' window.",
    ),
}
VALIDATION_COMMIT_TABLE = "snapshot_validations"
SNAPSHOT_VALIDATIONS = _schema(
    pa.field("validated_at", TS),
    pa.field("source", pa.string()),
    pa.field("trusted", pa.bool_()),
    pa.field("failed", pa.list_(pa.string())),
    pa.field("details", pa.string()),
    pa.field("data_docs", pa.string()),
    pa.field("suite_version", pa.string()),
    doc="Commit log of integrity validations (its own batches, `<snapshot_id>.validation`): one row "
    "per validated batch. `snapshot_id`/`captured_at` are the validated batch's, from the commit log "
    "named in `source` (`snapshots` or `group_snapshots`); `trusted` is false when any integrity "
    "expectation failed, and nothing may act on an untrusted batch (nor on one with no row here); "
    "`failed` names the failed expectations; `details` is JSON {expectation: {severity, meaning, "
    "count, rows}} plus what was observed; `data_docs` is the Data Docs page of the validation "
    "(a local path, null when none was built); `suite_version` is `kafka_ops.validation.suites."
    "SUITE_VERSION`. Re-validating a batch replaces its row.",
)
# -- remediation (kafka_ops.remediation) ----------------------------------------------------------
# Each table below is its own commit log: every row is published as its own batch, so a row is
# visible exactly when its file is in place. `snapshot_id` / `captured_at` are those of the plan's
# base snapshot (the ZooKeeper snapshot it was computed from).

REMEDIATION_PLANS_TABLE = "remediation_plans"
REMEDIATION_AUDIT_TABLE = "remediation_audit"
REMEDIATION_TABLES: dict[str, pa.Schema] = {
    REMEDIATION_PLANS_TABLE: _schema(
        pa.field("plan_id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("created_at", TS, nullable=False),
        pa.field("created_by", pa.string()),
        pa.field("partitions", pa.int32()),
        pa.field("moves", pa.int32()),
        pa.field("elections", pa.int32()),
        pa.field("request", pa.string()),
        pa.field("document", pa.string()),
        pa.field("plan", pa.string()),
        pa.field("reassignment", pa.string()),
        pa.field("rollback", pa.string()),
        pa.field("election", pa.string()),
        doc="One row per saved remediation plan (batch `<plan_id>`). `request`: the planner request "
        "(JSON); `document`: `Plan.to_document()` for review; `plan`: the complete plan the executor "
        "loads (JSON, see kafka_ops.remediation.store); `reassignment` / `rollback` / `election`: "
        "Kafka's own file formats (`kafka-reassign-partitions`, `kafka-leader-election`), also written "
        "as plain files under `<lake>/_plans/<cluster>/<plan_id>/`.",
    ),
    REMEDIATION_AUDIT_TABLE: _schema(
        pa.field("event_id", pa.string(), nullable=False),
        pa.field("at", TS, nullable=False),
        pa.field("plan_id", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("batch", pa.int32()),
        pa.field("action", pa.string(), nullable=False),
        pa.field("backend", pa.string()),
        pa.field("actor", pa.string()),
        pa.field("run_id", pa.string()),
        pa.field("outcome", pa.string(), nullable=False),
        pa.field("partitions", pa.int32()),
        pa.field("detail", pa.string()),
        doc="Append-only audit of every executor step that writes to a cluster, or refuses to: one row "
        "per event (batch `<event_id>`). `action`: set_throttle, reassign, elect, remove_throttle, "
        "cancel, verify, refuse, resume, wait; `batch`: the reassignment batch or election chunk "
        "(null for the whole plan); `actor` / `run_id`: who ran it (Airflow user, DAG run); "
        "`outcome`: ok, failed, refused, kept, stuck, already_applied, in_flight, ...; `detail`: what, "
        "in words.",
    ),
}


TABLES: dict[str, pa.Schema] = {
    **SNAPSHOT_TABLES,
    ANALYSIS_COMMIT_TABLE: ANALYSIS_RUNS,
    **ANALYSIS_STATE_TABLES,
    VALIDATION_COMMIT_TABLE: SNAPSHOT_VALIDATIONS,
    **REMEDIATION_TABLES,
}
COMMIT_TABLES = frozenset(
    {COMMIT_TABLE, GROUP_COMMIT_TABLE, ANALYSIS_COMMIT_TABLE, VALIDATION_COMMIT_TABLE, *REMEDIATION_TABLES}
)


def commit_table_of(table: str) -> str:
    """The commit log that says which rows of `table` are published (a commit log commits itself);
    findings tables, which are not declared here, are committed by `analysis_runs`."""
    if table in GROUP_TABLES:
        return GROUP_COMMIT_TABLE
    if table == VALIDATION_COMMIT_TABLE or table in REMEDIATION_TABLES:
        return table
    return COMMIT_TABLE if table in METADATA_TABLES else ANALYSIS_COMMIT_TABLE
