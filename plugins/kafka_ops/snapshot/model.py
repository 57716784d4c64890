"""A typed, pure model of a Kafka cluster's ZooKeeper metadata at one moment.

Models hold data, never sockets: collectors build them, planners and summaries read them.
Field names follow Kafka's znode fields; `REFERENCE.md` (shared) gives the formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

TopicPartition = tuple[str, int]


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
    """A registered broker: `/brokers/ids/<id>` (ephemeral; its czxid is the broker epoch)."""

    broker_id: int
    host: str | None
    port: int
    endpoints: tuple[str, ...]
    listener_security_protocol_map: dict[str, str]
    jmx_port: int
    registered_at_ms: int
    rack: str | None
    features: dict[str, dict[str, int]]
    version: int
    epoch: int


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
    version: int


@dataclass(frozen=True, slots=True)
class PartitionState:
    """Leader and ISR of one partition: `/brokers/topics/<t>/partitions/<p>/state`.

    `stat.version` is the partition epoch: it rises on every leader or ISR change.
    """

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    controller_epoch: int
    isr: tuple[int, ...]
    leader_recovery_state: int | None
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class Controller:
    """The active controller: `/controller` (ephemeral)."""

    broker_id: int
    elected_at_ms: int
    kraft_controller_epoch: int
    version: int
    stat: ZnodeStat


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
    """`/feature`: the finalized features and whether versioning is enabled (status 1)."""

    status: int
    features: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """`/config/changes/config_change_<seq>`: a dynamic config change brokers have yet to see
    (Kafka purges them after 15 minutes)."""

    name: str
    entity_path: str
    stat: ZnodeStat


@dataclass(frozen=True, slots=True)
class CollectionIssue:
    """A znode that could not be read or parsed; the rest of the snapshot still completes."""

    path: str
    problem: str
    kind: str = "parse"


@dataclass(slots=True)
class ClusterSnapshot:
    """Everything read from one cluster's ZooKeeper chroot in one walk.

    The walk is not atomic: `zxid_start`..`zxid_end` is the ZooKeeper transaction range it
    spans, so a change inside that range may be seen in one znode and not yet in another.
    """

    cluster: str
    snapshot_id: str
    captured_at: datetime
    zookeeper: str
    completed_at: datetime | None = None
    zxid_start: int = 0
    zxid_end: int = 0
    cluster_id: str | None = None
    brokers: dict[int, Broker] = field(default_factory=dict)
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

    @property
    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())

    def replicas(self, topic: str, partition: int) -> tuple[int, ...]:
        """The assigned replicas, without replicas a reassignment is still adding."""
        assignment = self.topics[topic]
        adding = set(assignment.adding_replicas.get(partition, ()))
        return tuple(r for r in assignment.partitions[partition] if r not in adding)

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
