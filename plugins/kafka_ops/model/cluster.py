"""A typed, pure model of a Kafka cluster's metadata at one moment, from either source.

Models hold data, never sockets: collectors build them, planners and summaries read them.
Field names follow Kafka's znode fields, whose formats Kafka 3.9 defines in
`core/src/main/scala/kafka/zk/ZkData.scala` (apache/kafka, branch 3.9; summarized in
docs/reference.md, "ZooKeeper layout"). The ZooKeeper source (`sources.zookeeper`, Kafka 3.x)
fills every field from znodes. The KRaft source (`sources.kraft`, the Admin API and the controller
quorum) fills the same fields where the Admin API tells them, and leaves `None` where it cannot
know them (znode stats and versions, broker epochs and registration times, JMX ports, the partition
epoch, leader recovery state); KRaft-only facts (fenced brokers, ELR, the quorum) are `None` on
ZooKeeper snapshots.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

TopicPartition = tuple[str, int]


def tp_text(tps: Iterable[TopicPartition], limit: int = 10) -> str:
    """`t-0, t-1, ... (and N more)` for messages."""
    ordered = sorted(tps)
    shown = ", ".join(f"{t}-{p}" for t, p in ordered[:limit])
    return shown + (f" (and {len(ordered) - limit} more)" if len(ordered) > limit else "")


@dataclass(frozen=True, slots=True)
class ZnodeStat:
    """The parts of a znode's stat the pipeline keeps."""

    version: int
    czxid: int
    mzxid: int
    ctime_ms: int
    mtime_ms: int


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker: `/brokers/ids/<id>` (ephemeral; its czxid is the broker epoch).

    `cordoned` (KRaft): Kafka takes no new replica on the broker (KIP-1066: its `cordoned.log.dirs`
    is `*` or names every one of its log dirs); None where that is not known (ZooKeeper, or its
    configs could not be read)."""

    broker_id: int
    host: str | None
    port: int
    endpoints: tuple[str, ...]
    listener_security_protocol_map: dict[str, str]
    jmx_port: int | None
    registered_at_ms: int | None
    rack: str | None
    features: dict[str, dict[str, int]]
    version: int | None
    epoch: int | None
    cordoned: bool | None = None


@dataclass(frozen=True, slots=True)
class TopicAssignment:
    """A topic's replica assignment: `/brokers/topics/<t>`.

    While a reassignment runs, `partitions` holds target plus original replicas (target first)
    and `adding_replicas` / `removing_replicas` are non-empty for the moving partitions.
    """

    topic: str
    topic_id: str | None
    partitions: dict[int, tuple[int, ...]]
    adding_replicas: dict[int, tuple[int, ...]]
    removing_replicas: dict[int, tuple[int, ...]]
    version: int | None


@dataclass(frozen=True, slots=True)
class PartitionState:
    """Leader and ISR of one partition: `/brokers/topics/<t>/partitions/<p>/state`, or one partition
    of a DescribeTopicPartitions answer on KRaft.

    `stat.version` is the partition epoch: it rises on every leader or ISR change (`stat` is None
    on KRaft: the Admin API does not tell the partition epoch). `elr` / `last_known_elr` are
    KIP-966's eligible leader replicas (None when the cluster does not report them: ZooKeeper, or
    ELR not enabled), `offline_replicas` the replicas on offline log dirs (KRaft only).
    """

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    controller_epoch: int | None
    isr: tuple[int, ...]
    leader_recovery_state: int | None
    stat: ZnodeStat | None
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    offline_replicas: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Controller:
    """The active controller: `/controller` (ephemeral), or on KRaft the quorum's leader (then
    `kraft_controller_epoch` is its leader epoch, and the znode fields are None)."""

    broker_id: int
    elected_at_ms: int | None
    kraft_controller_epoch: int
    version: int | None
    stat: ZnodeStat | None


@dataclass(frozen=True, slots=True)
class MigrationZnode:
    """`/migration` (3.9's ZooKeeper-to-KRaft migration): written by the active KRaft controller.

    The controller creates it (offset -1) when it starts in migration mode, fills it once the metadata
    is copied into its log, and rewrites it with every dual-write, so `modified_ms` (the znode's mtime)
    is the last time the controllers wrote to ZooKeeper and `kraft_metadata_offset` how far into the
    metadata log ZooKeeper is.
    """

    kraft_controller_id: int
    kraft_controller_epoch: int
    kraft_metadata_offset: int
    kraft_metadata_epoch: int
    modified_ms: int


@dataclass(frozen=True, slots=True)
class Divergence:
    """One partition field on which ZooKeeper and the KRaft metadata (as the brokers serve it) disagree."""

    topic: str
    partition: int | None
    field: str
    zookeeper: str | None
    kraft: str | None


@dataclass(frozen=True, slots=True)
class IsrChangeNotification:
    """`/isr_change_notification/isr_change_<seq>`, written by brokers on IBP < 2.7."""

    name: str
    partitions: tuple[TopicPartition, ...]
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class LogDirEvent:
    """`/log_dir_event_notification/log_dir_event_<seq>` (event 1 = log dir failure)."""

    name: str
    broker_id: int
    event: int
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class LogDir:
    """One log dir of a broker (DescribeLogDirs); total/usable bytes are None where not reported."""

    broker_id: int
    path: str
    error: str | None = None
    total_bytes: int | None = None
    usable_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class ReplicaSize:
    """One replica's size on disk in one log dir of a broker (DescribeLogDirs)."""

    topic: str
    partition: int
    broker_id: int
    log_dir: str
    size_bytes: int
    offset_lag: int | None = None
    is_future: bool = False


@dataclass(frozen=True, slots=True)
class ReassignmentRequest:
    """One partition of `/admin/reassign_partitions`: the requested target replicas."""

    topic: str
    partition: int
    replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConfigOverride:
    """Dynamic config of one entity: `/config/topics/<t>` or `/config/brokers/<id|<default>>`."""

    entity_type: str
    entity_name: str
    config: dict[str, str]


@dataclass(frozen=True, slots=True)
class QuotaConfig:
    """One client-quota entity: `/config/clients/<id>`, `/config/users/<user>[/clients/<id>]` or
    `/config/ips/<ip>`. Names are Kafka's desanitized ones (`app 2*`, not `app%202%2A`); `<default>`
    is the default entity. Only quota keys are kept: a user's SCRAM credentials never leave the parser,
    only which mechanisms have one."""

    entity_path: str
    """As `/config/changes` names it: `clients/app-1`, `users/alice/clients/app%202%2A`, `ips/10.0.0.1`."""
    user: str | None
    client_id: str | None
    ip: str | None
    quotas: dict[str, float]
    scram_mechanisms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AclResource:
    """The ACLs on one resource pattern (`/kafka-acl/<type>/<name>`, prefixed ones under
    `/kafka-acl-extended/prefixed/`), counted."""

    resource_type: str
    pattern_type: str
    name: str
    allow: int
    deny: int
    principals: int


@dataclass(frozen=True, slots=True)
class FeatureZnode:
    """`/feature`: the finalized features and whether versioning is enabled (status 1). On KRaft:
    ApiVersions' finalized features (status None: KRaft always versions features)."""

    status: int | None
    features: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """`/config/changes/config_change_<seq>`: a dynamic config change brokers have yet to see
    (Kafka purges them after 15 minutes)."""

    name: str
    entity_path: str
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class QuorumReplica:
    """One replica of the KRaft metadata log (`__cluster_metadata`), as DescribeQuorum reports it."""

    replica_id: int
    role: str
    """`voter` (a controller that votes) or `observer` (a broker, or a controller not yet a voter)."""
    directory_id: str | None
    log_end_offset: int
    last_fetch_ms: int | None
    last_caught_up_ms: int | None


@dataclass(frozen=True, slots=True)
class Quorum:
    """The controller quorum: its leader, epoch and high watermark, and every replica's progress."""

    leader_id: int | None
    leader_epoch: int
    high_watermark: int
    replicas: tuple[QuorumReplica, ...]

    @property
    def voters(self) -> dict[int, int]:
        """Each voter's log end offset (-1: not known yet, e.g. a voter just restarted)."""
        return {r.replica_id: r.log_end_offset for r in self.replicas if r.role == "voter"}

    @property
    def observers(self) -> dict[int, int]:
        return {r.replica_id: r.log_end_offset for r in self.replicas if r.role == "observer"}

    def leader_log_end_offset(self) -> int | None:
        return next(
            (r.log_end_offset for r in self.replicas if r.role == "voter" and r.replica_id == self.leader_id), None
        )

    def lag(self, replica: QuorumReplica) -> int | None:
        """Offsets behind the leader, as `kafka-metadata-quorum describe --replication` shows them."""
        end = self.leader_log_end_offset()
        if end is None or replica.log_end_offset < 0:  # -1: the leader has not heard from it since its election
            return None
        return max(0, end - replica.log_end_offset)


@dataclass(frozen=True, slots=True)
class TieredTopic:
    """A topic with remote storage (KIP-405, `remote.storage.enable=true`): the settings that decide what
    stays local, as the brokers apply them (DescribeConfigs, the topic's value or the broker default it
    inherits). `local_retention_ms` / `local_retention_bytes`: -2 keeps the topic's whole retention
    locally (`retention.ms` / `retention.bytes`), -1 keeps everything locally; `copy_disabled`:
    `remote.log.copy.disable` (nothing more is copied, Kafka 3.9+). None where not read."""

    topic: str
    local_retention_ms: int | None = None
    local_retention_bytes: int | None = None
    copy_disabled: bool | None = None


@dataclass(frozen=True, slots=True)
class TieredLog:
    """One partition of a topic with remote storage, as its leader (`leader`) answers ListOffsets:
    `log_start_offset` (earliest, -2: the first offset, remote storage included), `local_log_start_offset`
    (earliest-local, -4, ListOffsets v8+: the first offset on the leader's disk), `tiered_end_offset`
    (latest-tiered, -5, v9+: the last offset copied to remote storage, -1 while nothing is) and
    `end_offset` (latest, -1: the high watermark). None where unknown: the broker does not serve the
    spec (a collection issue of kind `unsupported`), or refused or did not answer (kind `request`).

    The remote part of the log is offsets `log_start_offset`..`tiered_end_offset`, the local part
    `local_log_start_offset`..`end_offset - 1`; they overlap where a copied segment is still kept
    locally (`local.retention.*`). `copy_backlog` counts what is only local."""

    topic: str
    partition: int
    leader: int | None
    log_start_offset: int | None = None
    local_log_start_offset: int | None = None
    tiered_end_offset: int | None = None
    end_offset: int | None = None

    @property
    def copy_backlog(self) -> int | None:
        """Offsets in the local log not yet copied to remote storage: from the first offset after the
        last tiered one (or from the local log start, when that is later, or when nothing is tiered yet)
        up to the high watermark. It counts offsets, not records (compaction gaps and transaction
        markers are in it) and includes the active segment, which Kafka never copies until it rolls: a
        healthy partition's backlog stays below about one segment's records. None when any of the
        three offsets it needs is unknown."""
        if self.end_offset is None or self.tiered_end_offset is None or self.local_log_start_offset is None:
            return None
        return copy_backlog(self.end_offset, self.tiered_end_offset, self.local_log_start_offset)


def copy_backlog(end_offset: int, tiered_end_offset: int, local_log_start_offset: int) -> int:
    """`TieredLog.copy_backlog` from known offsets (`tiered_end_offset` -1: nothing tiered yet); never
    negative (answers read one after another may each be a moment apart)."""
    first_untiered = max(tiered_end_offset + 1, local_log_start_offset)
    return max(0, end_offset - first_untiered)


@dataclass(frozen=True, slots=True)
class CollectionIssue:
    """A znode that could not be read or parsed; the rest of the snapshot still completes."""

    path: str
    problem: str
    kind: str = "parse"


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One partition of the probe topic: a record produced to it with acks=all and read back
    (`sources.probe`). `leader` is the broker probed (the partition's leader in the snapshot);
    `produce_ms` the time to the produce's acknowledgement, `e2e_ms` to the record read back (None where
    that step failed); `error` what Kafka answered (its error's name and message), or the step that timed
    out; None when both steps succeeded."""

    topic: str
    partition: int
    leader: int | None
    produce_ms: float | None
    e2e_ms: float | None
    error: str | None


@dataclass(slots=True)
class ClusterSnapshot:
    """Everything read from one cluster in one walk: its ZooKeeper chroot (`source` zookeeper) or its
    Admin API and controller quorum (`source` kraft).

    The walk is not atomic: on ZooKeeper, `zxid_start`..`zxid_end` is the transaction range it
    spans (0 on KRaft), so a change inside that range may be seen in one znode and not yet in another.
    """

    cluster: str
    snapshot_id: str
    captured_at: datetime
    zookeeper: str | None
    completed_at: datetime | None = None
    zxid_start: int = 0
    zxid_end: int = 0
    cluster_id: str | None = None
    brokers: dict[int, Broker] = field(default_factory=dict)
    """Brokers that can serve: registered (ZooKeeper), registered and unfenced (KRaft)."""
    fenced_brokers: dict[int, Broker] = field(default_factory=dict)
    """KRaft: registered but fenced (no leaderships, out of every ISR; a broker that stopped keeps
    its registration). Always empty on ZooKeeper, where a broker that is not alive has no znode."""
    topics: dict[str, TopicAssignment] = field(default_factory=dict)
    partition_states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    controller: Controller | None = None
    controller_epoch: int | None = None
    controller_epoch_stat: ZnodeStat | None = None
    isr_change_notifications: list[IsrChangeNotification] = field(default_factory=list)
    log_dir_events: list[LogDirEvent] = field(default_factory=list)
    reassignment_requests: list[ReassignmentRequest] = field(default_factory=list)
    preferred_election_requests: list[TopicPartition] = field(default_factory=list)
    pending_topic_deletions: list[str] = field(default_factory=list)
    configs: list[ConfigOverride] = field(default_factory=list)
    quotas: list[QuotaConfig] = field(default_factory=list)
    acls: list[AclResource] = field(default_factory=list)
    feature: FeatureZnode | None = None
    config_changes: list[ConfigChange] = field(default_factory=list)
    issues: list[CollectionIssue] = field(default_factory=list)
    log_dirs: list[LogDir] = field(default_factory=list)
    """Every serving broker's log dirs (DescribeLogDirs); empty when they were not collected."""
    replica_sizes: list[ReplicaSize] = field(default_factory=list)
    """Every replica's size on disk, per broker and log dir (DescribeLogDirs)."""
    source: str = "zookeeper"
    bootstrap_servers: str | None = None
    quorum: Quorum | None = None
    migration: MigrationZnode | None = None
    """ZooKeeper: `/migration`, present once KRaft controllers started migrating the cluster."""
    divergences: list[Divergence] | None = None
    """While a cluster migrates: partitions on which ZooKeeper and the KRaft metadata disagree (None:
    not compared)."""
    metadata_version: int | None = None
    """KRaft's finalized `metadata.version` feature level."""
    requests: int | None = None
    """Admin API requests the KRaft source sent (not stored in the lake; the benchmark reads it)."""
    probes: list[ProbeResult] = field(default_factory=list)
    """The end-to-end probe of each broker through the probe topic (empty: not probed)."""
    remote_storage: dict[str, bool | None] = field(default_factory=dict)
    """Topics with remote storage (KIP-405: `remote.storage.enable=true`) -> True, and topics whose
    configs could not be read -> None (unknown); a topic not here has no remote storage."""
    tiered_topics: dict[str, TieredTopic] = field(default_factory=dict)
    """The remote-storage topics' local retention settings (empty: none, or not read)."""
    tiered_logs: dict[TopicPartition, TieredLog] = field(default_factory=dict)
    """Every partition of a remote-storage topic with a leader: its local and remote parts (empty:
    none, or not read)."""

    @property
    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())

    def replicas(self, topic: str, partition: int) -> tuple[int, ...]:
        """The assigned replicas, without replicas a reassignment is still adding."""
        assignment = self.topics[topic]
        adding = set(assignment.adding_replicas.get(partition, ()))
        return tuple(r for r in assignment.partitions[partition] if r not in adding)

    def held_by(self, broker: int) -> list[TopicPartition]:
        """The partitions whose assignment lists `broker` (replicas a reassignment is adding included)."""
        return sorted(
            (t, p) for t, a in self.topics.items() for p, replicas in a.partitions.items() if broker in replicas
        )

    def under_replicated(self) -> list[TopicPartition]:
        """Partitions whose ISR is smaller than their assignment, as `kafka-topics` counts them.

        Replicas a reassignment is still adding do not count; a partition with no state znode
        is reported as a collection issue, not here.
        """
        out = []
        for (topic, partition), state in self.partition_states.items():
            assignment = self.topics.get(topic)
            if assignment is None or partition not in assignment.partitions:
                continue
            if len(state.isr) < len(self.replicas(topic, partition)):
                out.append((topic, partition))
        return sorted(out)

    def offline(self) -> list[TopicPartition]:
        """Partitions with no leader, or a leader that is not a registered broker."""
        return sorted(
            tp for tp, state in self.partition_states.items() if state.leader == -1 or state.leader not in self.brokers
        )


def new_snapshot_id(cluster: str, at: datetime) -> str:
    """Sortable by capture time, unique across clusters and repeated captures."""
    return f"{at:%Y%m%dT%H%M%S}{at.microsecond // 1000:03d}Z-{cluster}-{secrets.token_hex(3)}"
