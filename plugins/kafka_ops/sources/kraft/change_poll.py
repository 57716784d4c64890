"""A cheap read of what a KRaft controller notices, for the change watch: brokers and fencing
(DescribeCluster, fenced brokers included), the active controller, its epoch and the voters
(DescribeQuorum), and one digest of every partition's leader, ISR and ELR (DescribeTopicPartitions
pages). No configs, log dirs, quotas or ACLs: a poll every few seconds must stay a handful of
requests, whatever the cluster's size.

Every page comes from one broker (each broker answers from its own copy of the metadata log: pages
from brokers at different offsets would make the digest flap); a broker that does not answer is
skipped for the next one. An answer that cannot be decoded is a `CollectionIssue` and its part is
`UNKNOWN` (`change_digest.merged` keeps the previous value); a cluster that cannot be reached raises
`KafkaUnreachable`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, TypeVar

from kafka.errors import KafkaError
from kafka.protocol.admin import DescribeTopicPartitionsRequest

from kafka_ops.errors import KafkaProtocolError, KafkaUnreachable, NotAKRaftCluster
from kafka_ops.model.cluster import CollectionIssue
from kafka_ops.sources import change_digest
from kafka_ops.sources.admin import UNREACHABLE
from kafka_ops.sources.kraft import quorum
from kafka_ops.sources.kraft.collector import DEFAULT_PAGE_SIZE, LEADER_NOT_AVAILABLE, UNSUPPORTED

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

log = logging.getLogger(__name__)

T = TypeVar("T")
ATTEMPTS = 3
"""Tries of DescribeCluster and DescribeQuorum on a connection error: kafka-python asks the least loaded
broker it knows, which may be one that just died and is not fenced yet; the next try asks another."""
RETRY_S = 0.2
UNDECODABLE = (KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What decoding an answer of an unexpected shape raises (a field missing, of the wrong type)."""


def poll(
    admin: KafkaAdminClient, page_size: int = DEFAULT_PAGE_SIZE
) -> tuple[dict[str, Hashable], list[CollectionIssue]]:
    """One read of the parts (`change_digest`) and the issues met. Blocking (kafka-python); raises
    `KafkaUnreachable` when no broker answers, `NotAKRaftCluster` when the brokers run on ZooKeeper."""
    issues: list[CollectionIssue] = []
    view: dict[str, Hashable] = {}
    brokers = _answer(admin.describe_cluster, "DescribeCluster")
    try:
        listed = [(int(b["broker_id"]), bool(b.get("is_fenced", False))) for b in brokers["brokers"]]
        view |= change_digest.broker_parts(listed)
    except UNDECODABLE as e:
        issues.append(_undecodable("DescribeCluster", e))
        view |= dict.fromkeys((change_digest.BROKERS, change_digest.FENCED_BROKERS), change_digest.UNKNOWN)
        listed = []
    # DescribeQuorum asked as the collector asks it (kafka-python's own call crashes on an answer with
    # null topics, and waits past its request timeout on a broker slow to connect)
    try:
        view |= change_digest.quorum_parts(_answer(lambda: quorum.ask(admin), quorum.REQUEST))
    except UNSUPPORTED as e:
        raise NotAKRaftCluster(
            f"the brokers do not serve DescribeQuorum ({e}): they run on ZooKeeper; set metadata_source = "
            "zookeeper (or auto, with the cluster's ZooKeeper connection) for this cluster"
        ) from e
    except (*UNDECODABLE, KafkaError, KafkaProtocolError) as e:
        issues.append(_undecodable("DescribeQuorum", e))
        view |= dict.fromkeys((change_digest.CONTROLLER, change_digest.QUORUM_VOTERS), change_digest.UNKNOWN)
    unfenced = sorted(b for b, fenced in listed if not fenced)
    view[change_digest.PARTITIONS] = _partitions(admin, unfenced, page_size, issues)
    return view, issues


def _answer(ask: Callable[[], T], request: str) -> T:
    attempt = 1
    while True:
        try:
            return ask()
        except UNREACHABLE as e:
            if attempt == ATTEMPTS:
                raise KafkaUnreachable(f"{request}: no broker answered ({type(e).__name__}: {e})") from e
        time.sleep(RETRY_S * attempt)
        attempt += 1


def _partitions(admin: KafkaAdminClient, brokers: list[int], page_size: int, issues: list[CollectionIssue]) -> Hashable:
    """The partitions' digest from the first of `brokers` that answers every page (None: any broker)."""
    failures = []
    nodes: list[int | None] = [*brokers] or [None]
    for node in nodes:
        try:
            rows = admin._manager.run(_walk, admin, node, page_size, issues)
        except UNREACHABLE as e:
            failures.append(f"broker {node}: {type(e).__name__}: {e}")
            continue
        except (*UNDECODABLE, KafkaError) as e:
            issues.append(_undecodable("DescribeTopicPartitions", e))
            return change_digest.UNKNOWN
        return change_digest.partition_digest(rows)
    raise KafkaUnreachable("DescribeTopicPartitions: no broker answered: " + "; ".join(failures))


async def _walk(
    admin: KafkaAdminClient, node: int | None, page_size: int, issues: list[CollectionIssue]
) -> list[tuple[str, int, int, tuple[int, ...], tuple[int, ...] | None]]:
    rows = []
    cursor = None
    while True:
        request = DescribeTopicPartitionsRequest(
            topics=[],
            response_partition_limit=page_size,
            cursor=None
            if cursor is None
            else DescribeTopicPartitionsRequest.Cursor(
                topic_name=cursor.topic_name, partition_index=cursor.partition_index
            ),
        )
        page = await admin._manager.send(request, node_id=node)
        for topic in page.topics:
            if topic.error_code:
                issues.append(
                    CollectionIssue(f"topic {topic.name}", f"DescribeTopicPartitions error {topic.error_code}")
                )
                continue
            for p in topic.partitions:
                if p.error_code not in (0, LEADER_NOT_AVAILABLE):
                    where = f"topic {topic.name} partition {p.partition_index}"
                    issues.append(CollectionIssue(where, f"DescribeTopicPartitions error {p.error_code}"))
                    continue
                elr = None if p.eligible_leader_replicas is None else tuple(p.eligible_leader_replicas)
                rows.append((topic.name, p.partition_index, p.leader_id, tuple(p.isr_nodes), elr))
        cursor = page.next_cursor
        if cursor is None:
            return rows


def _undecodable(request: str, error: BaseException) -> CollectionIssue:
    issue = CollectionIssue(request, f"answer cannot be decoded: {type(error).__name__}: {error}", "request")
    log.warning("collection issue: %s: %s", issue.path, issue.problem)
    return issue
