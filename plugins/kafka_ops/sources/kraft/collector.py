"""Snapshot a KRaft cluster (Kafka 4.x, or 3.x without ZooKeeper) through the Admin API.

Fills the same `ClusterSnapshot` as the ZooKeeper source, from a handful of requests whatever the
cluster's size: DescribeCluster (fenced brokers included), DescribeQuorum (the active controller
and its epoch: never DescribeCluster's `controller_id`, which a KRaft broker fills with a random
live broker), DescribeTopicPartitions in pages of `page_size` partitions (ISR, ELR, offline
replicas), ListPartitionReassignments, DescribeConfigs, ApiVersions' finalized features, the
quotas and ACL counts (`sources.kraft.extras`), and one DescribeLogDirs per broker (replica sizes and
log dirs, `sources.log_dirs`: sent once the brokers are known, the page broker's once the walk is
done, read after the rest), and last, for topics with remote storage only, their local and remote
offsets (`sources.tiered`: nothing is sent when no topic has any). A field the
Admin API does not tell is None, never made up (see `model.cluster`).

An API a broker does not support leaves its part of the snapshot empty with a `CollectionIssue`
(kind `unsupported`) naming the request; a cluster that cannot be reached raises
`KafkaUnreachable`; brokers that run on ZooKeeper raise `NotAKRaftCluster`, naming the setting.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from kafka.admin import KafkaAdminClient
from kafka.errors import IncompatibleBrokerVersion, KafkaError, UnsupportedVersionError, for_code
from kafka.protocol.admin import DescribeTopicPartitionsRequest, ListPartitionReassignmentsRequest

from kafka_ops.errors import KafkaProtocolError, KafkaUnreachable, NotAKRaftCluster
from kafka_ops.model.cluster import (
    Broker,
    ClusterSnapshot,
    CollectionIssue,
    Controller,
    PartitionState,
    TopicAssignment,
    new_snapshot_id,
)
from kafka_ops.sources import log_dirs, tiered
from kafka_ops.sources.admin import UNREACHABLE, AdminFactory, with_admin
from kafka_ops.sources.kraft import extras, quorum, topic_configs
from kafka_ops.sources.kraft.quorum import kafka_uuid

log = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 2000
"""Partitions per DescribeTopicPartitions answer: the brokers' default (and maximum)
`max.request.partition.size.limit`."""
UNKNOWN_TOPIC = 3
LEADER_NOT_AVAILABLE = 5
"""A partition error that still comes with its replicas and ISR: the partition is offline."""
UNSUPPORTED = (UnsupportedVersionError, IncompatibleBrokerVersion)
ATTEMPTS = 4
"""Tries of each core request (quorum, brokers, topics) on a connection error: kafka-python sends to the
least loaded broker it knows, which may be one that just died and is not fenced yet; the next try goes
to another. Only when every try fails is the cluster unreachable."""
BACKOFF_S = 0.25


class KRaftCollector:
    """Reads one KRaft cluster's metadata through its brokers' Admin API into a `ClusterSnapshot`."""

    def __init__(self, cluster: str, admin_factory: AdminFactory, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        self.cluster = cluster
        self.admin_factory = admin_factory
        self.page_size = page_size

    def collect(self, topics: Iterable[str] | None = None) -> ClusterSnapshot:
        """Raises `KafkaUnreachable` when no broker answers (nothing is published then: a cluster
        that cannot be seen is never reported healthy), `NotAKRaftCluster` when the brokers run on
        ZooKeeper; any narrower failure is a `CollectionIssue` in the snapshot.

        `topics`: a live read of only these (what the remediation executor polls): the quorum, the
        brokers, these topics' partitions and dynamic configs, the brokers' configs and the
        reassignments in flight; no features, quotas or ACLs."""
        only = None if topics is None else sorted(set(topics))
        doing = "taking a snapshot" if only is None else "reading live state"
        return with_admin(self.admin_factory, doing, lambda admin, at: _Run(self, admin, at).collect(only))


class _Run:
    """One collection: the admin client, the snapshot being filled and a count of requests sent."""

    def __init__(self, collector: KRaftCollector, admin: KafkaAdminClient, where: str) -> None:
        self.collector = collector
        self.admin = admin
        self.where = where
        self.requests = 0
        self.log_dirs: list[Any] = []
        """DescribeLogDirs sent (`log_dirs.send` futures), read after the rest; `log_dirs_asked`: to whom."""
        self.log_dirs_asked: set[int] = set()
        self.page_node: int | None = None
        """The broker the partition pages came from."""
        self.topic_configs: list[Any] = []
        """The topics' DescribeConfigs, sent during the walk and read last (`(broker id, kafka-python future)`)."""
        manager = admin._manager
        send = manager.send

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.requests += 1
            return send(*args, **kwargs)

        manager.send = counted  # this client only: the benchmark reads how many requests a snapshot costs

    def collect(self, only: list[str] | None) -> ClusterSnapshot:
        captured_at = datetime.now(UTC)
        cluster = self.collector.cluster
        snap = ClusterSnapshot(
            cluster=cluster,
            snapshot_id=new_snapshot_id(cluster, captured_at),
            captured_at=captured_at,
            zookeeper=None,
            source="kraft",
            bootstrap_servers=self.where,
        )
        self._core(lambda attempt: self._quorum(snap))  # first: a ZooKeeper-mode cluster is refused at once
        self._core(lambda attempt: self._cluster(snap))
        self._core(lambda attempt: self._topics(snap, attempt, only))
        self._optional(snap, "ListPartitionReassignments", lambda: self._reassignments(snap))
        if only is None:  # a live read, polled while a plan runs, needs none of these
            self._optional(snap, "ApiVersions (finalized features)", lambda: extras.read_features(self.admin, snap))
            self._optional(snap, "DescribeClientQuotas", lambda: extras.read_quotas(self.admin, snap))
            self._optional(snap, "DescribeAcls", lambda: extras.read_acls(self.admin, snap))
            self._ask_log_dirs(snap.brokers)  # the page broker's, now that it has answered the rest
            self._optional(snap, log_dirs.REQUEST, lambda: log_dirs.read(self.admin, snap, *self.log_dirs))
        # last: the slowest answers, which the brokers prepare while the rest is read
        self._optional(snap, "DescribeConfigs", lambda: extras.read_configs(self.admin, snap, self.topic_configs))
        if only is None:  # once the topics' overrides say which have remote storage
            timeout_ms = self.admin.config["request_timeout_ms"]
            self._optional(snap, tiered.REQUEST, lambda: tiered.read(self.admin, snap, timeout_ms))
        snap.completed_at = datetime.now(UTC)
        snap.requests = self.requests
        return snap

    @staticmethod
    def _core(read: Callable[[int], None]) -> None:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                read(attempt)
                return
            except UNREACHABLE as e:
                if attempt == ATTEMPTS:
                    raise
                log.info("retrying after %r (attempt %s of %s)", e, attempt, ATTEMPTS)
                time.sleep(BACKOFF_S * attempt)

    def _optional(self, snap: ClusterSnapshot, request: str, read: Callable[[], None]) -> None:
        """A part of the snapshot beside brokers, topics and the quorum: when the brokers do not serve it,
        or the one broker asked went down (not fenced yet), its absence is an issue, not a failure (the
        cluster itself was seen: a cluster that cannot be seen fails on the quorum, brokers or topics)."""
        try:
            read()
        except UNSUPPORTED as e:
            snap.issues.append(CollectionIssue(request, f"the brokers do not support it: {e}", "unsupported"))
        except (KafkaError, *UNREACHABLE) as e:
            snap.issues.append(CollectionIssue(request, f"{type(e).__name__}: {e}", "request"))

    # -- the quorum: the active controller and its epoch --------------------------------------

    def _quorum(self, snap: ClusterSnapshot) -> None:
        """The quorum (DescribeQuorum, forwarded to the active controller by the broker asked, `quorum.ask`).
        An answer that is not a quorum, or none within the request timeout, is an issue: the rest of the
        snapshot stands, without controller. A broker forwards DescribeQuorum to the active controller and
        answers only once it has: with that controller killed, brokers that serve everything else were seen
        to let it time out for two minutes, and failing the snapshot then paged "cannot see cluster"."""
        try:
            snap.quorum = quorum.ask(self.admin)
        except UNSUPPORTED as e:
            raise NotAKRaftCluster(
                f"cluster {snap.cluster!r}: the brokers at {self.where} do not serve DescribeQuorum ({e}): "
                "they run on ZooKeeper; set metadata_source = zookeeper (or auto, with the cluster's "
                "ZooKeeper connection) for this cluster"
            ) from e
        except (KafkaProtocolError, KafkaUnreachable) as e:
            snap.issues.append(CollectionIssue(quorum.REQUEST, str(e), "request"))
            return
        if snap.quorum.leader_id is not None:
            snap.controller = Controller(
                broker_id=snap.quorum.leader_id,
                elected_at_ms=None,
                kraft_controller_epoch=snap.quorum.leader_epoch,
                version=None,
                stat=None,
            )
        snap.controller_epoch = snap.quorum.leader_epoch

    # -- brokers ------------------------------------------------------------------------------

    def _cluster(self, snap: ClusterSnapshot) -> None:
        """Brokers from DescribeCluster, which lists fenced ones too from v2 (Kafka 4.0) on; kafka-python
        falls back to Metadata on older brokers, which lists only unfenced ones."""
        answer = self.admin.describe_cluster()
        snap.cluster_id = answer.get("cluster_id")
        snap.brokers.clear()  # a retried read starts again
        snap.fenced_brokers.clear()
        if answer["brokers"] and "is_fenced" not in answer["brokers"][0]:
            problem = "the brokers do not list fenced brokers (DescribeCluster v2, Kafka 4.0+): none is shown"
            snap.issues.append(CollectionIssue("DescribeCluster v2", problem, "unsupported"))
        for b in answer["brokers"]:
            broker = Broker(
                broker_id=b["broker_id"],
                host=b["host"],
                port=b["port"],
                endpoints=(),
                listener_security_protocol_map={},
                jmx_port=None,
                registered_at_ms=None,
                rack=b.get("rack"),
                features={},
                version=None,
                epoch=None,
            )
            (snap.fenced_brokers if b.get("is_fenced") else snap.brokers)[broker.broker_id] = broker

    # -- topics, partitions and their state -------------------------------------------------

    def _topics(self, snap: ClusterSnapshot, attempt: int, only: list[str] | None) -> None:
        """Every topic (internal ones too, as `/brokers/topics` lists them), page by page, every page
        from ONE broker: each broker answers from its own copy of the metadata log, and a page asked of
        a broker that is behind would end the walk at the last topic it knows (a snapshot seen missing
        its last 2,000 partitions under load, with pages spread over brokers). The broker is the
        unfenced one furthest along the metadata log (the quorum's observers); a retry asks the next.
        The topics' configs are asked for during the walk and read last (see `_walk`)."""
        snap.topics.clear()  # a retried walk starts again
        snap.partition_states.clear()
        self.page_node = node = self._freshest_broker(snap, attempt)
        if only is None:  # a broker answers one connection's requests in turn: the page broker's log dirs wait
            self._ask_log_dirs(b for b in snap.brokers if b != node)
        self.topic_configs = self.admin._manager.run(self._walk, snap, node, only, sorted(snap.brokers))

    def _ask_log_dirs(self, brokers: Iterable[int]) -> None:
        """DescribeLogDirs to those of `brokers` not asked yet, answered while the collector reads the rest
        (each within the request timeout, connecting included: a broker hung but not fenced yet costs
        only that)."""
        ask = set(brokers) - self.log_dirs_asked
        if ask:
            self.log_dirs_asked |= ask
            self.log_dirs.append(log_dirs.send(self.admin, ask, self.admin.config["request_timeout_ms"]))

    async def _walk(self, snap: ClusterSnapshot, node: int | None, only: list[str] | None,
                    config_nodes: list[int]) -> list[Any]:  # fmt: skip
        """The pages into `snap`, each read while the broker prepares the next one, and one DescribeConfigs
        per page for the topics it brings, sent as soon as the page is in, to the other brokers in turn:
        a broker answers one connection's requests one after another, so configs asked of the page's
        broker would hold the next page back. Returns the DescribeConfigs still in flight (`(broker id,
        kafka-python future)`): the brokers work on them while the collector reads the rest, and they are read last
        (`extras.read_configs`). A snapshot costs the pages' round trips, not the configs' too."""
        configs: list[Any] = []
        asked: set[str] = set()
        config_nodes = [b for b in config_nodes if b != node] or config_nodes
        topics = only or []
        pending = self._page(node, None, topics)
        while pending is not None:
            page = await pending
            pending = None if page.next_cursor is None else self._page(node, page.next_cursor, topics)
            names = sorted({t.name for t in page.topics if not t.error_code} - asked)
            if names:
                asked.update(names)
                to = config_nodes[len(configs) % len(config_nodes)] if config_nodes else None
                configs.append((to, self.admin._manager.send(topic_configs.request(names), node_id=to)))
            for topic in page.topics:
                if only is not None and topic.error_code == UNKNOWN_TOPIC:
                    continue  # a topic of the plan that is gone: the executor sees it missing
                self._topic(snap, topic)
        return configs

    @staticmethod
    def _freshest_broker(snap: ClusterSnapshot, attempt: int) -> int | None:
        observed = snap.quorum.observers if snap.quorum is not None else {}
        ranked = sorted(snap.brokers, key=lambda b: (-observed.get(b, -1), b))
        return ranked[(attempt - 1) % len(ranked)] if ranked else None

    def _page(self, node: int | None, cursor: Any, topics: list[str]) -> Any:
        """Send one DescribeTopicPartitions (the page from `cursor` on); a kafka-python future of its answer."""
        request = DescribeTopicPartitionsRequest(
            topics=[DescribeTopicPartitionsRequest.TopicRequest(name=t) for t in topics],
            response_partition_limit=self.collector.page_size,
            cursor=None
            if cursor is None
            else DescribeTopicPartitionsRequest.Cursor(
                topic_name=cursor.topic_name, partition_index=cursor.partition_index
            ),
        )
        return self.admin._manager.send(request, node_id=node)

    def _topic(self, snap: ClusterSnapshot, raw: Any) -> None:
        """One topic of a DescribeTopicPartitions answer (kafka-python's response object)."""
        name = raw.name
        if raw.error_code:
            snap.issues.append(CollectionIssue(f"topic {name}", f"DescribeTopicPartitions error {raw.error_code}"))
            return
        topic_id = kafka_uuid(raw.topic_id)
        existing = snap.topics.get(name)  # a topic split across two pages
        partitions = dict(existing.partitions) if existing else {}
        for p in raw.partitions:
            index = p.partition_index
            if p.error_code not in (0, LEADER_NOT_AVAILABLE):
                problem = f"DescribeTopicPartitions error {p.error_code}"
                snap.issues.append(CollectionIssue(f"topic {name} partition {index}", problem))
                continue
            partitions[index] = tuple(p.replica_nodes)
            snap.partition_states[(name, index)] = PartitionState(
                topic=name,
                partition=index,
                leader=p.leader_id,
                leader_epoch=p.leader_epoch,
                controller_epoch=None,
                isr=tuple(p.isr_nodes),
                leader_recovery_state=None,
                stat=None,
                elr=_ints(p.eligible_leader_replicas),
                last_known_elr=_ints(p.last_known_elr),
                offline_replicas=tuple(p.offline_replicas or ()),
            )
        snap.topics[name] = TopicAssignment(name, topic_id, partitions, {}, {}, None)

    # -- reassignments in flight --------------------------------------------------------------

    def _reassignments(self, snap: ClusterSnapshot) -> None:
        """Adding / removing replicas of each moving partition, as the topic znode holds them on
        ZooKeeper (the replicas DescribeTopicPartitions gave already hold target plus original). Asked of
        the broker the pages came from (any broker forwards it to the active controller): it is idle now,
        while the others may still be working on the topics' configs, which would hold this answer back."""
        request = ListPartitionReassignmentsRequest(timeout_ms=self.admin.config["request_timeout_ms"], topics=None)
        answer = self.admin._manager.run(self.admin._manager.send, request, self.page_node)
        if answer.error_code:
            error = for_code(answer.error_code)
            raise error(f"ListPartitionReassignments: {answer.error_message or error.__name__}")
        adding: dict[str, dict[int, tuple[int, ...]]] = {}
        removing: dict[str, dict[int, tuple[int, ...]]] = {}
        for topic in answer.topics:
            for p in topic.partitions:
                adding.setdefault(topic.name, {})[p.partition_index] = tuple(p.adding_replicas)
                removing.setdefault(topic.name, {})[p.partition_index] = tuple(p.removing_replicas)
        for name in adding.keys() & snap.topics.keys():
            t = snap.topics[name]
            snap.topics[name] = TopicAssignment(name, t.topic_id, t.partitions, adding[name], removing[name], None)


def _ints(values: list[int] | None) -> tuple[int, ...] | None:
    """ELR lists: kafka-python reads an absent (null) list as None, which stays None."""
    return None if values is None else tuple(values)
