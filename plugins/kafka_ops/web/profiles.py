"""Metric-name profiles: the same figures under the names existing dashboards query.

* `kafka-lag-exporter`: Kafka Lag Exporter's (seglo/kafka-lag-exporter README, "Metrics"), with
  its labels `cluster_name, group, topic, partition, member_host, consumer_id, client_id`.
* `kminion`: KMinion's (redpanda-data/kminion, prometheus/exporter.go, namespace `kminion`), labels
  `group_id, topic_name, partition_id` and, for its broker, topic and cluster series, KMinion's own
  (held against a capture of the real KMinion 2.3.5: tests/fixtures/peer-captures).
* `kafka_exporter`: danielqsj/kafka_exporter's (kafka_exporter.go, namespace `kafka`), labels
  `consumergroup, topic, partition`.
* `burrow`: Burrow's own (linkedin/Burrow, core/internal/httpserver/prometheus.go), labels `cluster,
  consumer_group, topic, partition`, statuses as Burrow's codes (OK 1, WARN 2, ERR 3; a partition's STOP 4,
  STALL 5, REWIND 6).

KMinion and kafka_exporter watch one cluster per process and carry no cluster label; here one
endpoint serves every configured cluster, so their series get a `cluster` label too (queries that
aggregate by their own labels are unchanged). Kafka-ops' own `kafka_ops_*` metrics come with every
profile (`own_metrics`). Adding a profile is one function here and one line in `PROFILES`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily, Metric

from kafka_ops import __version__
from kafka_ops.web.figures import STATUS_CODES, ClusterFigures

Profile = Callable[[Sequence[ClusterFigures]], list[Metric]]
PARTITION_LABELS = ["cluster_name", "group", "topic", "partition", "member_host", "consumer_id", "client_id"]


def gauge(name: str, documentation: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=list(labels))


# -- Kafka Lag Exporter --------------------------------------------------------------------------


def kafka_lag_exporter(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    offset = gauge("kafka_consumergroup_group_offset", "The last committed offset of the group on the partition.",
                   PARTITION_LABELS)  # fmt: skip
    lag = gauge("kafka_consumergroup_group_lag", "Messages between the partition's end and the group's offset.",
                PARTITION_LABELS)  # fmt: skip
    seconds = gauge("kafka_consumergroup_group_lag_seconds", "How long the group is behind on the partition.",
                    PARTITION_LABELS)  # fmt: skip
    max_lag = gauge("kafka_consumergroup_group_max_lag", "The group's largest partition lag in messages.",
                    ["cluster_name", "group", "is_simple_consumer"])  # fmt: skip
    max_seconds = gauge("kafka_consumergroup_group_max_lag_seconds", "The group's largest lag in seconds.",
                        ["cluster_name", "group", "is_simple_consumer"])  # fmt: skip
    sum_lag = gauge("kafka_consumergroup_group_sum_lag", "The group's lag summed over its partitions.",
                    ["cluster_name", "group"])  # fmt: skip
    topic_sum = gauge("kafka_consumergroup_group_topic_sum_lag", "The group's lag summed over a topic's partitions.",
                      ["cluster_name", "group", "topic"])  # fmt: skip
    latest = gauge("kafka_partition_latest_offset", "The partition's end offset (high watermark).",
                   ["cluster_name", "topic", "partition"])  # fmt: skip
    for c in clusters:
        simple = {g.group: str(g.protocol_type == "").lower() for g in c.groups}
        worst: dict[str, int] = defaultdict(int)
        worst_s: dict[str, float] = defaultdict(float)
        sums: dict[tuple[str, str], int] = defaultdict(int)
        for p in c.partitions:
            labels = [c.cluster, p.group, p.topic, str(p.partition), p.owner.host, p.owner.member_id, p.owner.client_id]
            if p.committed_offset is not None:
                offset.add_metric(labels, p.committed_offset)
            if p.lag is not None:
                lag.add_metric(labels, p.lag)
                worst[p.group] = max(worst[p.group], p.lag)
                sums[(p.group, p.topic)] += p.lag
            if p.lag_seconds is not None:
                seconds.add_metric(labels, p.lag_seconds)
                worst_s[p.group] = max(worst_s[p.group], p.lag_seconds)
        for group, value in sorted(worst.items()):
            max_lag.add_metric([c.cluster, group, simple.get(group, "false")], value)
        for group, value_s in sorted(worst_s.items()):
            max_seconds.add_metric([c.cluster, group, simple.get(group, "false")], value_s)
        for group in sorted({g for g, _ in sums}):
            sum_lag.add_metric([c.cluster, group], sum(v for (g, _), v in sums.items() if g == group))
        for (group, topic), value in sorted(sums.items()):
            topic_sum.add_metric([c.cluster, group, topic], value)
        for (topic, partition), end in sorted(c.end_offsets.items()):
            latest.add_metric([c.cluster, topic, str(partition)], end)
    return [offset, lag, seconds, max_lag, max_seconds, sum_lag, topic_sum, latest]


# -- KMinion --------------------------------------------------------------------------------------


def kminion(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """KMinion 2.3.5's series about the cluster's state, with its label sets plus `cluster`: the groups'
    (`_kminion_groups`), the partitions' water marks (`_kminion_offsets`), and the cluster's, brokers',
    topics' and log dirs' (`_kminion_cluster`); `kminion_exporter_up` with `version`, kafka-ops' own.
    KMinion's counters about its own process (requests, bytes, log messages) have no equivalent here."""
    tp = ["cluster", "group_id", "topic_name"]
    partition_lag = gauge("kminion_kafka_consumer_group_topic_partition_lag",
                          "Messages the group is behind on the partition.", [*tp, "partition_id"])  # fmt: skip
    topic_lag = gauge(
        "kminion_kafka_consumer_group_topic_lag", "Messages the group is behind, summed over a topic.", tp
    )
    offset_sum = gauge("kminion_kafka_consumer_group_topic_offset_sum", "The group's committed offsets summed over a "
                       "topic.", tp)  # fmt: skip
    up = gauge("kminion_exporter_up", "1 when this cluster's figures could be read.", ["cluster", "version"])
    for c in clusters:
        up.add_metric([c.cluster, __version__], 1 if c.up else 0)
        lags: dict[tuple[str, str], int] = defaultdict(int)
        offsets: dict[tuple[str, str], int] = defaultdict(int)
        for p in c.partitions:
            if p.lag is not None:
                partition_lag.add_metric([c.cluster, p.group, p.topic, str(p.partition)], p.lag)
                lags[(p.group, p.topic)] += p.lag
            if p.committed_offset is not None:
                offsets[(p.group, p.topic)] += p.committed_offset
        for (group, topic), value in sorted(lags.items()):
            topic_lag.add_metric([c.cluster, group, topic], value)
        for (group, topic), value in sorted(offsets.items()):
            offset_sum.add_metric([c.cluster, group, topic], value)
    return [partition_lag, topic_lag, offset_sum, *_kminion_groups(clusters), *_kminion_offsets(clusters),
            *_kminion_cluster(clusters), up]  # fmt: skip


def _kminion_offsets(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """Each partition's high and low water marks (end and log start offsets) and their sums per topic,
    for the partitions the group collection reads; as KMinion, a topic's low water mark sum only when
    every such partition's start offset is known."""
    tp, t = ["cluster", "topic_name", "partition_id"], ["cluster", "topic_name"]
    high = gauge("kminion_kafka_topic_partition_high_water_mark", "The partition's high water mark.", tp)
    high_sum = gauge("kminion_kafka_topic_high_water_mark_sum", "High water marks summed over the topic's partitions.",
                     t)  # fmt: skip
    low = gauge("kminion_kafka_topic_partition_low_water_mark", "The partition's low water mark (log start offset).",
                tp)  # fmt: skip
    low_sum = gauge("kminion_kafka_topic_low_water_mark_sum", "Low water marks summed over the topic's partitions.", t)
    for c in clusters:
        highs: dict[str, int] = defaultdict(int)
        lows: dict[str, int | None] = defaultdict(int)
        for (topic, partition), end in sorted(c.end_offsets.items()):
            high.add_metric([c.cluster, topic, str(partition)], end)
            highs[topic] += end
            start = c.start_offsets.get((topic, partition))
            if start is not None:
                low.add_metric([c.cluster, topic, str(partition)], start)
            known = lows[topic]
            lows[topic] = None if known is None or start is None else known + start
        for topic, value in sorted(highs.items()):
            high_sum.add_metric([c.cluster, topic], value)
        for topic, total in sorted(lows.items()):
            if total is not None:
                low_sum.add_metric([c.cluster, topic], total)
    return [high, high_sum, low, low_sum]


def _kminion_cluster(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """The metadata snapshot's cluster, brokers, topics and replica bytes, as KMinion labels them
    (`is_controller` "true"/"false", `controller_id` -1 without a controller). `cluster_version` is the
    release of KRaft's finalized metadata.version ("v3.9"), empty on ZooKeeper: see `ClusterInfo.version`."""
    broker = ["cluster", "broker_id", "address", "port", "rack_id"]
    cluster_info = gauge("kminion_kafka_cluster_info", "Kafka cluster information.",
                         ["cluster", "cluster_version", "broker_count", "controller_id", "cluster_id"])  # fmt: skip
    broker_info = gauge("kminion_kafka_broker_info", "Kafka broker information.", [*broker, "is_controller"])
    broker_bytes = gauge("kminion_kafka_broker_log_dir_size_total_bytes", "The bytes the broker's replicas hold in "
                         "its log dirs.", broker)  # fmt: skip
    topic_info = gauge(
        "kminion_kafka_topic_info",
        "Topic information.",
        ["cluster", "topic_name", "partition_count", "replication_factor", "cleanup_policy"],
    )
    topic_bytes = gauge("kminion_kafka_topic_log_dir_size_total_bytes", "The bytes the topic's replicas hold on every "
                        "broker.", ["cluster", "topic_name"])  # fmt: skip
    for c in clusters:
        if c.info is not None:
            i = c.info
            controller = "-1" if i.controller_id is None else str(i.controller_id)
            version = "" if i.version is None else f"v{i.version}"
            cluster_info.add_metric([c.cluster, version, str(i.broker_count), controller, i.cluster_id or ""], 1)
        labels = {}
        for b in c.brokers:
            labels[b.broker_id] = [c.cluster, str(b.broker_id), b.host, "" if b.port is None else str(b.port),
                                   b.rack or ""]  # fmt: skip
            broker_info.add_metric([*labels[b.broker_id], str(b.is_controller).lower()], 1)
        for broker_id, size in sorted(c.broker_bytes.items()):
            broker_bytes.add_metric(labels.get(broker_id, [c.cluster, str(broker_id), "", "", ""]), size)
        for t in c.topics:
            topic_info.add_metric([c.cluster, t.topic, str(t.partitions), str(t.replication_factor), t.cleanup_policy],
                                  1)  # fmt: skip
        for topic, size in sorted(c.topic_bytes.items()):
            topic_bytes.add_metric([c.cluster, topic], size)
    return [cluster_info, broker_info, broker_bytes, topic_info, topic_bytes]


def _kminion_groups(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """KMinion's per-group series, with its label sets (plus `cluster`)."""
    g, tp = ["cluster", "group_id"], ["cluster", "group_id", "topic_name"]
    info = gauge("kminion_kafka_consumer_group_info", "1 if the group is Stable, else 0.",
                 [*g, "protocol", "protocol_type", "state", "coordinator_id"])  # fmt: skip
    members = gauge("kminion_kafka_consumer_group_members", "Members of the group.", g)
    empty = gauge("kminion_kafka_consumer_group_empty_members", "Members with no partition assigned (only above 0).", g)
    topic_members = gauge("kminion_kafka_consumer_group_topic_members", "Members assigned a partition of the topic.",
                          tp)  # fmt: skip
    topic_assigned = gauge("kminion_kafka_consumer_group_topic_assigned_partitions",
                           "Partitions of the topic assigned to the group's members.", tp)  # fmt: skip
    for c in clusters:
        for grp in c.groups:
            state = grp.state or ""
            coordinator = "" if grp.coordinator_id is None else str(grp.coordinator_id)
            info.add_metric([c.cluster, grp.group, grp.assignor or "", grp.protocol_type or "", state, coordinator],
                            1 if state == "Stable" else 0)  # fmt: skip
            members.add_metric([c.cluster, grp.group], grp.members)
            if grp.empty_members > 0:  # as KMinion: the series exists only while some member is empty
                empty.add_metric([c.cluster, grp.group], grp.empty_members)
            for topic, (assigned, holders) in grp.topics.items():
                topic_assigned.add_metric([c.cluster, grp.group, topic], assigned)
                topic_members.add_metric([c.cluster, grp.group, topic], holders)
    return [info, members, empty, topic_members, topic_assigned]


# -- kafka_exporter -------------------------------------------------------------------------------


def kafka_exporter(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    tp, gtp = ["cluster", "topic", "partition"], ["cluster", "consumergroup", "topic", "partition"]
    brokers = gauge("kafka_brokers", "Number of Brokers in the Kafka Cluster.", ["cluster"])
    partitions = gauge("kafka_topic_partitions", "Number of partitions for this Topic", ["cluster", "topic"])
    current = gauge("kafka_topic_partition_current_offset", "Current Offset of a Broker at Topic/Partition", tp)
    leader = gauge("kafka_topic_partition_leader", "Leader Broker ID of this Topic/Partition", tp)
    replicas = gauge("kafka_topic_partition_replicas", "Number of Replicas for this Topic/Partition", tp)
    in_sync = gauge("kafka_topic_partition_in_sync_replica", "Number of In-Sync Replicas for this Topic/Partition", tp)
    preferred = gauge("kafka_topic_partition_leader_is_preferred", "1 if Topic/Partition is using the Preferred Broker",
                      tp)  # fmt: skip
    under = gauge("kafka_topic_partition_under_replicated_partition", "1 if Topic/Partition is under Replicated", tp)
    group_offset = gauge("kafka_consumergroup_current_offset", "Current Offset of a ConsumerGroup at Topic/Partition",
                         gtp)  # fmt: skip
    group_offset_sum = gauge("kafka_consumergroup_current_offset_sum", "Current Offset of a ConsumerGroup at Topic "
                             "for all partitions", gtp[:3])  # fmt: skip
    group_lag = gauge("kafka_consumergroup_lag", "Current Approximate Lag of a ConsumerGroup at Topic/Partition", gtp)
    group_lag_sum = gauge("kafka_consumergroup_lag_sum", "Current Approximate Lag of a ConsumerGroup at Topic for all "
                          "partitions", gtp[:3])  # fmt: skip
    members = gauge("kafka_consumergroup_members", "Amount of members in a consumer group", gtp[:2])
    for c in clusters:
        if "brokers" in c.counts:
            brokers.add_metric([c.cluster], c.counts["brokers"])
        per_topic: dict[str, int] = defaultdict(int)
        health = None if c.health is None else c.health.select(["topic", "partition", "leader", "replicas", "isr"])
        for h in health.to_pylist() if health is not None else []:
            labels = [c.cluster, h["topic"], str(h["partition"])]
            per_topic[h["topic"]] += 1
            held, isr = h["replicas"] or [], h["isr"] or []
            leader_id = -1 if h["leader"] is None else h["leader"]
            leader.add_metric(labels, leader_id)
            replicas.add_metric(labels, len(held))
            in_sync.add_metric(labels, len(isr))
            preferred.add_metric(labels, 1 if held and leader_id == held[0] else 0)
            under.add_metric(labels, 1 if len(isr) < len(held) else 0)
        for topic, count in sorted(per_topic.items()):
            partitions.add_metric([c.cluster, topic], count)
        for (topic, partition), end in sorted(c.end_offsets.items()):
            current.add_metric([c.cluster, topic, str(partition)], end)
        offsets: dict[tuple[str, str], int] = defaultdict(int)
        lags: dict[tuple[str, str], int] = defaultdict(int)
        for p in c.partitions:
            labels = [c.cluster, p.group, p.topic, str(p.partition)]
            if p.committed_offset is not None:
                group_offset.add_metric(labels, p.committed_offset)
                offsets[(p.group, p.topic)] += p.committed_offset
            if p.lag is not None:
                group_lag.add_metric(labels, p.lag)
                lags[(p.group, p.topic)] += p.lag
        for (group, topic), value in sorted(offsets.items()):
            group_offset_sum.add_metric([c.cluster, group, topic], value)
        for (group, topic), value in sorted(lags.items()):
            group_lag_sum.add_metric([c.cluster, group, topic], value)
        for grp in c.groups:
            members.add_metric([c.cluster, grp.group], grp.members)
    return [brokers, partitions, current, leader, replicas, in_sync, preferred, under, group_offset, group_offset_sum,
            group_lag, group_lag_sum, members]  # fmt: skip


# -- Burrow ---------------------------------------------------------------------------------------


def burrow(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """Burrow's series: a group's status and total lag; every partition's lag; and, as Burrow, a
    partition's committed offset and status only once its window is complete; every end offset."""
    g, gtp = ["cluster", "consumer_group"], ["cluster", "consumer_group", "topic", "partition"]
    status = gauge("burrow_kafka_consumer_status", "The group's Burrow status (1 OK, 2 WARN, 3 ERR).", g)
    total = gauge("burrow_kafka_consumer_lag_total", "The group's lag summed over its partitions.", g)
    lag = gauge("burrow_kafka_consumer_partition_lag", "The group's lag on the partition.", gtp)
    offset = gauge("burrow_kafka_consumer_current_offset", "The group's last committed offset on the partition.", gtp)
    partition_status = gauge("burrow_kafka_topic_partition_status", "The partition's Burrow status (1 OK, 2 WARN, "
                             "4 STOP, 5 STALL, 6 REWIND).", gtp)  # fmt: skip
    end = gauge("burrow_kafka_topic_partition_offset", "The partition's end offset.", ["cluster", "topic", "partition"])
    for c in clusters:
        sums: dict[str, int] = defaultdict(int)
        for p in c.partitions:
            if p.status is None or p.lag is None:  # Burrow reports the groups it has evaluated
                continue
            labels = [c.cluster, p.group, p.topic, str(p.partition)]
            lag.add_metric(labels, p.lag)
            sums[p.group] += p.lag
            if (p.complete or 0.0) < 1.0:
                continue
            if p.committed_offset is not None:
                offset.add_metric(labels, p.committed_offset)
            partition_status.add_metric(labels, STATUS_CODES[p.status])
        for grp in c.groups:
            if grp.status is not None:
                status.add_metric([c.cluster, grp.group], STATUS_CODES[grp.status])
                total.add_metric([c.cluster, grp.group], sums.get(grp.group, 0))
        for (topic, partition), value in sorted(c.end_offsets.items()):
            end.add_metric([c.cluster, topic, str(partition)], value)
    return [status, total, lag, offset, partition_status, end]


PROFILES: dict[str, Profile] = {
    "kafka-lag-exporter": kafka_lag_exporter,
    "kminion": kminion,
    "kafka_exporter": kafka_exporter,
    "burrow": burrow,
}


# -- kafka-ops' own --------------------------------------------------------------------------------


def freshness_metrics(clusters: Sequence[ClusterFigures], now: datetime, lake_up: bool) -> list[Metric]:
    """`kafka_ops_up`, `kafka_ops_cluster_up` and each source's capture time, age and staleness."""
    c_, cs = ["cluster"], ["cluster", "source"]
    up = gauge("kafka_ops_up", "1 when the lake could be read for every configured cluster.")
    cluster_up = gauge("kafka_ops_cluster_up", "1 when the cluster's batches could be read from the lake.", c_)
    collected = gauge("kafka_ops_collected_timestamp_seconds", "Capture time of the batch each source's figures come "
                      "from (metadata, metadata_analysis, groups, group_analysis).", cs)  # fmt: skip
    age = gauge("kafka_ops_data_age_seconds", "Seconds between the source's capture time and this scrape.", cs)
    stale = gauge("kafka_ops_data_stale", "1 when the source's batch is older than [web] metrics_max_age_minutes: its "
                  "figures are left out.", cs)  # fmt: skip
    up.add_metric([], 1 if lake_up and all(c.up for c in clusters) else 0)
    for c in clusters:
        cluster_up.add_metric([c.cluster], 1 if c.up else 0)
        for source, part in c.parts.items():
            if part.captured_at is not None:
                collected.add_metric([c.cluster, source], part.captured_at.timestamp())
                age.add_metric([c.cluster, source], max(0.0, (now - part.captured_at).total_seconds()))
                stale.add_metric([c.cluster, source], 1 if part.stale else 0)
    return [up, cluster_up, collected, age, stale]


def own_metrics(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """kafka-ops' own figures no profile names: lag with its method, Burrow statuses, records lost or about to be
    lost to retention, partition health, leaders, controller, reassignments and open alerts."""
    c_ = ["cluster"]
    lag = gauge("kafka_ops_partition_lag", "Messages the group is behind on the partition.",
                ["cluster", "group", "topic", "partition"])  # fmt: skip
    seconds = gauge("kafka_ops_partition_lag_seconds", "Seconds the group is behind on the partition; `method` says "
                    "how it was obtained (exact, caught_up, interpolated, extrapolated, lower_bound).",
                    ["cluster", "group", "topic", "partition", "method"])  # fmt: skip
    partition_status = gauge("kafka_ops_partition_status_code", "Burrow's partition status: 1 OK, 2 WARN, 4 STOP, "
                             "5 STALL, 6 REWIND.", ["cluster", "group", "topic", "partition"])  # fmt: skip
    group_status = gauge(
        "kafka_ops_group_status_code", "Burrow's group status: 1 OK, 2 WARN, 3 ERR.", ["cluster", "group"]
    )
    group_state = gauge("kafka_ops_group_state", "1 for the group's coordinator state.", ["cluster", "group", "state"])
    health = {
        flag: gauge(f"kafka_ops_{flag}_partitions", f"Partitions {flag.replace('_', ' ')} in the latest snapshot.", c_)
        for flag in ("under_replicated", "under_min_isr", "at_min_isr", "offline")
    }
    imbalanced = gauge("kafka_ops_leader_imbalanced_brokers", "Brokers leading fewer partitions than they are "
                       "preferred for, beyond the threshold.", c_)  # fmt: skip
    non_preferred = gauge("kafka_ops_non_preferred_leader_partitions", "Partitions not led by their preferred replica.",
                          c_)  # fmt: skip
    fixable = gauge("kafka_ops_fixable_leader_partitions", "Of those, partitions a preferred election would fix now.",
                    c_)  # fmt: skip
    controller = gauge("kafka_ops_controller_id", "The active controller (KRaft: the quorum leader); -1 for none.", c_)
    epoch = gauge("kafka_ops_controller_epoch", "The controller epoch (KRaft: the quorum leader epoch).", c_)
    elections = gauge("kafka_ops_controller_elections_last_hour", "Controller changes observed in the last hour.", c_)
    in_flight = gauge("kafka_ops_reassignments_in_flight", "Partitions being reassigned.", c_)
    stuck = gauge("kafka_ops_reassignments_stuck", "Reassignments past thresholds.stuck_reassignment_minutes.", c_)
    for c in clusters:
        for p in c.partitions:
            labels = [c.cluster, p.group, p.topic, str(p.partition)]
            if p.lag is not None:
                lag.add_metric(labels, p.lag)
            if p.lag_seconds is not None:
                seconds.add_metric([*labels, p.method or ""], p.lag_seconds)
            if p.status is not None:
                partition_status.add_metric(labels, STATUS_CODES.get(p.status, 0))
        for g in c.groups:
            if g.status is not None:
                group_status.add_metric([c.cluster, g.group], STATUS_CODES.get(g.status, 0))
            group_state.add_metric([c.cluster, g.group, g.state or ""], 1)
        for flag, family in health.items():
            if flag in c.counts:
                family.add_metric([c.cluster], c.counts[flag])
        _leaders_and_controller(c, imbalanced, non_preferred, fixable, controller, epoch, elections)
        if c.reassignments is not None:
            in_flight.add_metric([c.cluster], len(c.reassignments))
            stuck.add_metric([c.cluster], sum(bool(r.get("stuck")) for r in c.reassignments))
    return [lag, seconds, partition_status, group_status, group_state, *_retention(clusters), *_catching_up(clusters),
            *_probes(clusters), *_tiered(clusters),
            *health.values(), imbalanced, non_preferred, fixable, controller, epoch, elections, in_flight, stuck,
            *_alerts_and_plans(clusters)]  # fmt: skip


def _retention(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """From `retention_risk_partitions`: when retention can delete each group's first unconsumed record, and the
    records it deleted before the group read them (0 where retention applies and nothing is lost; no sample where
    the analysis could not tell)."""
    labels = ["cluster", "group", "topic", "partition"]
    eta = gauge("kafka_ops_group_retention_eta_seconds", "Seconds until retention can delete the group's first "
                "unconsumed record on the partition: basis retention.ms is a lower bound (whole segments, at the "
                "retention checks), retention.bytes an estimate at the current produce rate.",
                [*labels, "basis"])  # fmt: skip
    lost = gauge("kafka_ops_group_records_lost", "Records retention deleted before the group read them (its "
                 "committed offset below the partition's log start offset).", labels)  # fmt: skip
    for c in clusters:
        for r in c.retention or []:
            where = [c.cluster, r["group_id"], r["topic"], str(r["partition"])]
            if r.get("eta_seconds") is not None:
                eta.add_metric([*where, r.get("eta_basis") or ""], r["eta_seconds"])
            if r["state"] == "lost":
                lost.add_metric(where, r["records_lost"])
            elif r["state"] in ("at_risk", "ok", "not_applicable"):
                lost.add_metric(where, 0)
    return [eta, lost]


def _catching_up(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """From `lag_time_groups`: how fast each group's lag grows (positive) or falls over Burrow's window, and
    when it reaches zero at that rate (no sample where it would not: growing, steady, or too few samples)."""
    velocity = gauge("kafka_ops_group_lag_velocity", "Records per second the group's lag grows (negative: falls), "
                     "the slope over the last lag_window collections, summed over its partitions.",
                     ["cluster", "group", "trend"])  # fmt: skip
    closes = gauge("kafka_ops_group_time_to_close_seconds", "Seconds until the group's lag reaches zero at the "
                   "current rate (its slowest partition's); 0 when caught up.", ["cluster", "group"])  # fmt: skip
    for c in clusters:
        for r in c.catching_up or []:
            if r.get("lag_velocity") is not None:
                velocity.add_metric([c.cluster, r["group_id"], r.get("lag_trend") or ""], r["lag_velocity"])
            if r.get("time_to_close_seconds") is not None:
                closes.add_metric([c.cluster, r["group_id"]], r["time_to_close_seconds"])
    return [velocity, closes]


def _probes(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """From the latest snapshot's `probe_results`: per probe partition and the broker leading it, the seconds
    to the produce's acknowledgement (acks=all) and to the record read back, and whether the probe failed."""
    labels = ["cluster", "broker", "topic", "partition"]
    produce = gauge("kafka_ops_probe_produce_seconds", "Seconds to the acknowledgement of the probe's record "
                    "(acks=all) by the broker leading the partition.", labels)  # fmt: skip
    e2e = gauge("kafka_ops_probe_end_to_end_seconds", "Seconds from the probe's send to its record read back.",
                labels)  # fmt: skip
    failed = gauge("kafka_ops_probe_failed", "1 when the probe of the partition failed (Kafka refused the record, "
                   "or a step timed out), else 0.", labels)  # fmt: skip
    for c in clusters:
        for r in c.probes:
            where = [c.cluster, "" if r.get("leader") is None else str(r["leader"]), r["topic"], str(r["partition"])]
            if r.get("produce_ms") is not None:
                produce.add_metric(where, r["produce_ms"] / 1000)
            if r.get("e2e_ms") is not None:
                e2e.add_metric(where, r["e2e_ms"] / 1000)
            failed.add_metric(where, 1.0 if r.get("error") else 0.0)
    return [produce, e2e, failed]


def _tiered(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """From the latest snapshot's remote-storage partitions (tiered storage): per partition, the offsets only
    in the local log (the copy backlog), the offsets in the leader's local log and in remote storage, and
    the leader's local bytes. A figure the snapshot does not know (a broker that does not serve the offset
    specs, a partition without leader) has no sample."""
    labels = ["cluster", "topic", "partition"]
    backlog = gauge("kafka_ops_tiered_copy_backlog_offsets", "Offsets in the partition's local log not yet copied "
                    "to remote storage (high watermark minus the first offset after the last tiered one), the "
                    "active segment included: it stays below about a segment's records while tiering keeps up.",
                    labels)  # fmt: skip
    local = gauge("kafka_ops_tiered_local_offsets", "Offsets in the leader's local log (high watermark minus "
                  "the local log start offset).", labels)  # fmt: skip
    remote = gauge("kafka_ops_tiered_remote_offsets", "Offsets in remote storage (the last tiered offset plus one "
                   "minus the log start offset; 0 while nothing is tiered).", labels)  # fmt: skip
    local_bytes = gauge("kafka_ops_tiered_local_bytes", "Bytes of the leader's replica on its disk "
                        "(DescribeLogDirs: local segments only, never the remote part).", labels)  # fmt: skip
    for c in clusters:
        for r in c.tiered:
            where = [c.cluster, r["topic"], str(r["partition"])]
            start, local_start, tiered, end = (r.get(k) for k in ("log_start_offset", "local_log_start_offset",
                                                                  "tiered_end_offset", "end_offset"))  # fmt: skip
            if r.get("copy_backlog") is not None:
                backlog.add_metric(where, r["copy_backlog"])
            if local_start is not None and end is not None:
                local.add_metric(where, max(0, end - local_start))
            if start is not None and tiered is not None:
                remote.add_metric(where, max(0, tiered + 1 - start))
            if r.get("local_bytes") is not None:
                local_bytes.add_metric(where, r["local_bytes"])
    return [backlog, local, remote, local_bytes]


def _leaders_and_controller(c: ClusterFigures, *families: GaugeMetricFamily) -> None:
    imbalanced, non_preferred, fixable, controller, epoch, elections = families
    if c.leaders is not None:
        for family, column in ((imbalanced, "imbalanced_brokers"), (non_preferred, "non_preferred"),
                               (fixable, "fixable")):  # fmt: skip
            if c.leaders.get(column) is not None:
                family.add_metric([c.cluster], c.leaders[column])
    if c.controller is not None:
        cid = c.controller.get("controller_id")
        controller.add_metric([c.cluster], -1 if cid is None or c.controller.get("no_controller") else cid)
        for family, column in ((epoch, "controller_epoch"), (elections, "elections_last_hour")):
            if c.controller.get(column) is not None:
                family.add_metric([c.cluster], c.controller[column])


def _alerts_and_plans(clusters: Sequence[ClusterFigures]) -> list[Metric]:
    """Open incidents (and those a silence holds), silences in force, remediation plans per lifecycle state and
    the age of the oldest awaiting approval."""
    c_ = ["cluster"]
    alert = gauge("kafka_ops_alert_firing", "1 for each open alert incident.", ["cluster", "key", "severity"])
    alerts = gauge("kafka_ops_alerts_firing", "Open alert incidents by severity.", ["cluster", "severity"])
    silenced = gauge("kafka_ops_alert_silenced", "1 for each open incident a silence keeps from paging.",
                     ["cluster", "key", "severity"])  # fmt: skip
    silences = gauge("kafka_ops_silences_active", "Silences and maintenance windows in force.", c_)
    plans = gauge("kafka_ops_remediations", "Remediation plans per lifecycle state.", ["cluster", "state"])
    awaiting = gauge("kafka_ops_remediation_awaiting_approval_seconds",
                     "How long the oldest plan awaiting approval has waited.", c_)  # fmt: skip
    for c in clusters:
        counts: dict[str, int] = defaultdict(int)
        for a in c.alerts:
            alert.add_metric([c.cluster, a.key, a.severity], 1)
            if a.silenced:
                silenced.add_metric([c.cluster, a.key, a.severity], 1)
            counts[a.severity] += 1
        if c.up:
            for severity in ("critical", "warning", "info"):
                alerts.add_metric([c.cluster, severity], counts[severity])
        if c.silences is not None:
            silences.add_metric([c.cluster], c.silences)
        for state, count in (c.remediations or {}).items():
            plans.add_metric([c.cluster, state], count)
        if c.awaiting_approval_s is not None:
            awaiting.add_metric([c.cluster], c.awaiting_approval_s)
    return [alert, alerts, silenced, silences, plans, awaiting]
