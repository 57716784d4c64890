"""The end-to-end probe: does the cluster take and serve records right now, broker by broker?

Metadata can look healthy while produce fails: a full or read-only log dir the broker has not given up
yet, a `message.max.bytes` set too low on one broker, a quota, an authorization change. Each snapshot of
a cluster with a `probe_topic` produces one small record with acks=all to every partition of that topic
and reads it back, timing both: the partition's leader in the snapshot is the broker probed, so a topic
with a partition led by each broker probes them all (`probe_layout` lays it out that way).

A probe topic that does not exist is created only where the cluster's writes are enabled (it is then
probed from the next snapshot on, once its leaders are in the metadata); otherwise it is a collection
issue saying how to create it by hand. A broker that leads no partition of the topic is not probed,
and that is an issue too: where writes are enabled, a broker that is no partition's preferred leader (one
added to the cluster since the topic was laid out) gets a partition of its own (CreatePartitions, laid out
as `probe_layout` lays out the first ones) and is probed from the next snapshot on; one that is preferred
but does not lead (a restart moved its leadership) needs a preferred election, which the issue says.

Every failure of the probe is a result row (Kafka's error, or the step that timed out) or an issue, never
an exception: the snapshot it rides on is always published. Both clients are bounded by `timeout_s` per
step, so a broker that stops answering costs a timeout.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError
from kafka.structs import TopicPartition

from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, ProbeResult
from kafka_ops.sources.admin import AdminFactory
from kafka_ops.sources.groups.collector import KafkaTarget

DEFAULT_TIMEOUT_S = 10.0
"""Each step's bound (the produce, the read back)."""
ISSUE_KIND = "probe"
ERROR_CHARS = 300
"""A probe error is cut to this many characters."""


@dataclass(frozen=True)
class ProbeRequest:
    """A cluster's probe: its topic, and whether kafka-ops may create it (the cluster's writes enabled)."""

    topic: str
    create: bool
    timeout_s: float = DEFAULT_TIMEOUT_S


def probe_beside(snap: ClusterSnapshot, kafka: AdminFactory | None, request: ProbeRequest) -> None:
    """`probe` through the cluster's Kafka connection, or an issue when it has none (a ZooKeeper cluster
    without a Kafka connection)."""
    if not isinstance(kafka, KafkaTarget):
        snap.issues.append(CollectionIssue(
            f"probe topic {request.topic}", "not probed: the cluster has no Kafka connection (kafka_conn_id)",
            ISSUE_KIND,
        ))  # fmt: skip
        return
    probe(snap, kafka, request.topic, create=request.create, timeout_s=request.timeout_s)


def probe(snap: ClusterSnapshot, target: KafkaTarget, topic: str, *, create: bool,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> None:  # fmt: skip
    """Probe every serving broker of `snap` through `topic`, into `snap.probes` (module docstring);
    `create`: the cluster's writes are enabled, so a missing probe topic is created."""
    where = f"probe topic {topic}"
    assignment = snap.topics.get(topic)
    if assignment is None:
        if create:
            problem = _create(target, topic, sorted(snap.brokers))
        else:
            problem = (f"missing, and writes are not enabled for cluster {snap.cluster}, so kafka-ops does not "
                       f"create it: create it by hand, {create_command(topic, sorted(snap.brokers))}")  # fmt: skip
        snap.issues.append(CollectionIssue(where, problem, ISSUE_KIND))
        return
    leaders = {p: _leader(snap, topic, p) for p in sorted(assignment.partitions)}
    unprobed = sorted(set(snap.brokers) - {b for b in leaders.values() if b is not None})
    if unprobed:
        snap.issues.append(CollectionIssue(where, _unprobed(snap, target, topic, unprobed, create), ISSUE_KIND))
    snap.probes = run_probe(target, topic, leaders, timeout_s)


def _unprobed(snap: ClusterSnapshot, target: KafkaTarget, topic: str, unprobed: list[int], create: bool) -> str:
    """The issue's text for brokers leading no partition of the probe topic; with `create`, the brokers that are
    no partition's preferred leader get one (module docstring)."""
    partitions = snap.topics[topic].partitions
    preferred = {replicas[0] for replicas in partitions.values() if replicas}
    new = [b for b in unprobed if b not in preferred]
    said = f"broker(s) {unprobed} lead no partition of it and are not probed"
    if not create or not new:
        how = "add a partition led by each (kafka-topics --alter --partitions with --replica-assignment)"
        return f"{said}: {how}{'' if not preferred & set(unprobed) else ', or run a preferred election'}"
    rf = max((len(r) for r in partitions.values()), default=1)
    added = added_layout(sorted(snap.brokers), new, rf)
    admin = target()
    try:
        admin.create_partitions({topic: {"count": len(partitions) + len(added), "assignments": added}})
    except KafkaError as e:
        return f"{said}: adding a partition led by each of brokers {new} failed: {_text(e)}"
    finally:
        admin.close()
    rest = sorted(set(unprobed) - set(new))
    elect = f"; broker(s) {rest} are preferred but do not lead: run a preferred election" if rest else ""
    return f"{said}: added a partition led by each of brokers {new}, probed from the next snapshot on{elect}"


def added_layout(brokers: list[int], leaders: list[int], rf: int) -> list[list[int]]:
    """A new partition per broker in `leaders`, led by it, followed by the next brokers (in id order, wrapping)
    up to `rf` replicas (at most the brokers there are)."""
    rf = max(1, min(rf, len(brokers)))
    return [[brokers[(brokers.index(b) + i) % len(brokers)] for i in range(rf)] for b in leaders]


def run_probe(
    target: KafkaTarget, topic: str, leaders: Mapping[int, int | None], timeout_s: float
) -> list[ProbeResult]:
    """One record produced (acks=all) to each partition of `topic` and read back; `leaders`: partition →
    the broker leading it (None: no leader, not produced to). The reader stands at each partition's end
    before the sends, and reads while the acknowledgements come in: each figure is its partition's own."""
    run = _Run(topic, timeout_s, {p: "no leader: the partition is offline" for p, b in leaders.items() if b is None})
    probed = sorted(p for p in leaders if p not in run.errors)
    ms = int(timeout_s * 1000)
    consumer = producer = None
    try:
        consumer = KafkaConsumer(**_options(target), group_id=None, enable_auto_commit=False, request_timeout_ms=ms)
        probed = run.stand_at_ends(consumer, probed)
        producer = KafkaProducer(**_options(target), acks="all", retries=0, linger_ms=0, request_timeout_ms=ms,
                                 max_block_ms=ms)  # fmt: skip
        run.send(producer, probed)
        run.read_back(consumer, probed)
    except KafkaError as e:
        run.errors.update({p: _text(e) for p in probed if p not in run.acked})
    finally:
        if producer is not None:
            producer.close(timeout=timeout_s)
        if consumer is not None:
            consumer.close()
    return run.results(leaders, probed)


@dataclass
class _Run:
    """One probe's times (monotonic seconds) and errors, by partition."""

    topic: str
    timeout_s: float
    errors: dict[int, str]
    sent: dict[int, float] = field(default_factory=dict)
    acked: dict[int, float] = field(default_factory=dict)
    read: dict[int, float] = field(default_factory=dict)

    def stand_at_ends(self, consumer: KafkaConsumer, probed: list[int]) -> list[int]:
        """Assign the partitions and seek each to its end, one at a time: a leader that does not answer
        fails its own partition only. The partitions that can be probed."""
        partitions = {p: TopicPartition(self.topic, p) for p in probed}
        consumer.assign(list(partitions.values()))
        for p, tp in partitions.items():
            try:
                consumer.seek(tp, consumer.end_offsets([tp], timeout_ms=int(self.timeout_s * 1000))[tp])
            except KafkaError as e:
                self.errors[p] = f"end offset: {_text(e)}"
        return [p for p in probed if p not in self.errors]

    def send(self, producer: KafkaProducer, probed: list[int]) -> None:
        for p in probed:
            self.sent[p] = time.monotonic()
            future = producer.send(self.topic, value=b"kafka-ops probe", partition=p)
            future.add_callback(lambda _, p=p: self.acked.setdefault(p, time.monotonic()))
            future.add_errback(lambda e, p=p: self.errors.setdefault(p, _text(e)))

    def read_back(self, consumer: KafkaConsumer, probed: list[int]) -> None:
        """Poll until every probed partition's record is read or has failed, or `timeout_s`."""
        deadline = time.monotonic() + self.timeout_s
        while len(self.read) + len(set(self.errors) & set(probed)) < len(probed) and time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=100).items():
                if records:
                    self.read.setdefault(tp.partition, time.monotonic())

    def results(self, leaders: Mapping[int, int | None], probed: list[int]) -> list[ProbeResult]:
        for p in probed:
            if p not in self.acked:
                self.errors.setdefault(p, f"produce: no acknowledgement within {self.timeout_s:g} s")
            elif p not in self.read:
                self.errors.setdefault(p, f"read back: the record was not read within {self.timeout_s:g} s")
        return [
            ProbeResult(
                self.topic,
                p,
                b,
                round((self.acked[p] - self.sent[p]) * 1000, 3) if p in self.acked else None,
                round((self.read[p] - self.sent[p]) * 1000, 3) if p in self.read and p in self.acked else None,
                self.errors.get(p),
            )
            for p, b in sorted(leaders.items())
        ]


def _create(target: KafkaTarget, topic: str, brokers: list[int]) -> str:
    """Create the probe topic with a partition led by each broker; what happened, for the issue."""
    if not brokers:
        return "missing, and no broker serves to create it on"
    admin = target()
    try:
        admin.create_topics([NewTopic(topic, replica_assignments=probe_layout(brokers))])
    except KafkaError as e:
        return f"missing, and creating it failed: {_text(e)}"
    finally:
        admin.close()
    return f"created with a partition led by each of brokers {brokers}: probed from the next snapshot on"


def probe_layout(brokers: list[int]) -> dict[int, list[int]]:
    """Partition p led by the p-th broker, with up to two followers after it (RF min(3, brokers))."""
    return dict(enumerate(added_layout(brokers, brokers, 3)))


def create_command(topic: str, brokers: list[int]) -> str:
    """`kafka-topics --create` for the probe topic laid out by `probe_layout`."""
    layout = ",".join(":".join(str(b) for b in replicas) for replicas in probe_layout(brokers).values())
    return (f"kafka-topics --bootstrap-server <brokers> --create --topic {topic} "
            f"--replica-assignment {layout or '<a partition led by each broker>'}")  # fmt: skip


def _leader(snap: ClusterSnapshot, topic: str, partition: int) -> int | None:
    state = snap.partition_states.get((topic, partition))
    return None if state is None or state.leader < 0 or state.leader not in snap.brokers else state.leader


def _options(target: KafkaTarget) -> dict[str, Any]:
    """The target's connection options both a producer and a consumer take (security, not its timeouts)."""
    known = set(KafkaProducer.DEFAULT_CONFIG) & set(KafkaConsumer.DEFAULT_CONFIG)
    kept = {k: v for k, v in target.options.items() if k in known and not k.endswith("_ms")}
    return {**kept, "bootstrap_servers": target.bootstrap_servers}


def _text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:ERROR_CHARS]
