"""Assignor what-if: what Kafka's own assignors would give each Stable consumer group.

The one detector that is not pure Spark: the latest collection's groups and members (small:
members, not partitions x history) are collected to the driver and handed to kafka-clients'
assignors through a JVM (`kafka_ops.assignors.whatif`, `kafka_ops.assignors`). The partition layout
(replicas, broker racks, for rack-aware assignment) comes from the latest ZooKeeper snapshot at
or before the group collection, else from the group collection's end offsets (no racks).

A Stable group already on the consumer protocol (`group_type` consumer) gets the server-side
assignors only (`assignors.consumer_whatif`): its members sent no JoinGroup metadata and the
broker, not a client, assigns it; its own assignor is the prediction, a switch a change of
`group.remote.assignor`. A member subscribed by regex leaves the group with an error instead.

Findings:

* `assignor_whatif`, one row per group and assignor: the client's (`range`, `roundrobin`,
  `sticky`, `cooperative-sticky`; protocol `classic`) and the consumer protocol's server-side ones
  of Kafka 4.4's group coordinator (`uniform`, `range`; protocol `consumer`, KIP-848, what the
  same members would get after an online upgrade): snapshot_id, group_id, assignor, protocol,
  is_current, min_partitions, max_partitions, spread (max - min partitions per member), lag_spread
  (max - min of the members' summed lag, at today's lags), moved_partitions (partitions whose owner
  would change from today's), rebalance_rounds (2+ when a cooperative group needs follow-up
  rebalances; null for the consumer protocol, which has no group-wide rebalance),
  revoked_partitions, error (Kafka's assignor refused the input, or Kafka 4's jars are missing for
  the server-side ones), severity (`info`; `warning` with an error).
* `assignor_recommendations`, one row per group: snapshot_id, group_id, assignor, members,
  min_partitions, max_partitions, spread, lag_spread (today), prediction_matches (Kafka's own
  assignor, fed the metadata the members really sent, reproduces today's assignment; false means
  the next rebalance will move `prediction_moves` partitions, e.g. after partitions were added),
  recommended (an assignor materially better than today's, or null), recommended_protocol
  (`classic`, or `consumer`: the reason then carries the migration steps to
  `group.protocol=consumer`), reason, error, severity
  (`warning` when a switch is recommended or the prediction differs, `info` when the what-if
  could not run, else `ok`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.assignors import AssignorBridge, ClusterLayout, ConsumerMember
from kafka_ops.assignors.consumer_whatif import ConsumerProtocolGroup, what_if_consumer_groups
from kafka_ops.assignors.whatif import GroupToday, MemberToday, Outcome, Verdict, what_if
from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE

CONSUMER = "consumer"
CLASSIC = "classic"
STABLE = "Stable"

WHATIF_SCHEMA = (
    "snapshot_id string, group_id string, assignor string, protocol string, is_current boolean, "
    "min_partitions int, max_partitions int, spread int, lag_spread long, moved_partitions int, "
    "rebalance_rounds int, revoked_partitions int, error string, severity string"
)
RECOMMENDATION_SCHEMA = (
    "snapshot_id string, group_id string, assignor string, members int, min_partitions int, max_partitions int, "
    "spread int, lag_spread long, prediction_matches boolean, prediction_moves int, recommended string, "
    "recommended_protocol string, reason string, error string, severity string"
)


def groups_today(groups: DataFrame, members: DataFrame, context: Context) -> list[GroupToday]:
    """The latest collection's Stable classic groups of the consumer protocol type with their
    members' metadata. A group of the consumer protocol of KIP-848 (`group_type` consumer) is
    assigned by the broker, not by a client assignor: the client-side what-if does not apply."""
    stable = latest(groups, context).where(
        (F.col("state") == STABLE)
        & (F.col("protocol_type") == CONSUMER)
        & (F.coalesce(F.col("group_type"), F.lit(CLASSIC)) == CLASSIC)  # null: collected before group types
    )
    rows = (
        latest(members, context)
        .join(stable.select("group_id", "assignor"), "group_id")
        .select(
            "group_id", "assignor", "member_id", "group_instance_id", "client_id", "subscription", "assigned_partitions"
        )
        .collect()
    )
    by_group: dict[str, list[Any]] = defaultdict(list)
    for r in rows:
        by_group[r["group_id"]].append(r)
    return [
        GroupToday(
            group_id,
            found[0]["assignor"] or "",
            tuple(
                MemberToday(
                    r["member_id"],
                    r["group_instance_id"],
                    r["client_id"] or "",
                    bytes(r["subscription"] or b""),
                    tuple((p["topic"], p["partition"]) for p in r["assigned_partitions"] or ()),
                )
                for r in sorted(found, key=lambda r: r["member_id"])
            ),
        )
        for group_id, found in sorted(by_group.items())
    ]


def consumer_protocol_groups_today(
    groups: DataFrame, members: DataFrame, context: Context
) -> list[ConsumerProtocolGroup]:
    """The latest collection's Stable groups of the consumer protocol (KIP-848) with their members
    as the broker keeps them: subscribed topics (or regex), rack, current assignment."""
    stable = latest(groups, context).where((F.col("state") == STABLE) & (F.col("group_type") == CONSUMER))
    rows = (
        latest(members, context)
        .join(stable.select("group_id", "assignor"), "group_id")
        .select(
            "group_id", "assignor", "member_id", "group_instance_id", "rack", "subscribed_topics",
            "subscribed_regex", "assigned_partitions",
        )
        .collect()
    )  # fmt: skip
    by_group: dict[str, list[Any]] = defaultdict(list)
    for r in rows:
        by_group[r["group_id"]].append(r)
    out = []
    for group_id, found in sorted(by_group.items()):
        found.sort(key=lambda r: r["member_id"])
        members_now = tuple(
            ConsumerMember(
                r["member_id"],
                tuple(r["subscribed_topics"] or ()),
                tuple((p["topic"], p["partition"]) for p in r["assigned_partitions"] or ()),
                r["group_instance_id"],
                r["rack"],
            )
            for r in found
        )
        regex = tuple(r["member_id"] for r in found if r["subscribed_regex"])
        out.append(ConsumerProtocolGroup(group_id, found[0]["assignor"] or "", members_now, regex))
    return out


def layout(brokers: DataFrame, partitions: DataFrame, end_offsets: DataFrame, context: Context) -> ClusterLayout:
    """Replicas and racks from the newest ZooKeeper snapshot; partition counts from end offsets
    for topics it does not have."""
    topics: dict[str, dict[int, tuple[int, ...]]] = defaultdict(dict)
    racks: dict[int, str | None] = {}
    newest = partitions.agg(F.max_by("snapshot_id", "captured_at")).first()
    if newest is not None and newest[0] is not None:
        for r in partitions.where(F.col("snapshot_id") == newest[0]).select("topic", "partition", "replicas").collect():
            topics[r["topic"]][r["partition"]] = tuple(r["replicas"] or ())
        for r in brokers.where(F.col("snapshot_id") == newest[0]).select("broker_id", "rack").collect():
            racks[r["broker_id"]] = r["rack"]
    for r in latest(end_offsets, context).select("topic", "partition").collect():
        if r["topic"] not in topics or r["partition"] not in topics[r["topic"]]:
            topics[r["topic"]].setdefault(r["partition"], ())
    return ClusterLayout(
        brokers=racks, topics={t: tuple(ps.get(p, ()) for p in range(max(ps) + 1)) for t, ps in topics.items() if ps}
    )


def topic_ids(partitions: DataFrame) -> dict[str, str]:
    """Kafka's topic ids in the newest snapshot, where it has them (the server-side assignors
    order topics by id in places; a topic without one gets an id fixed by its name)."""
    newest = partitions.agg(F.max_by("snapshot_id", "captured_at")).first()
    if newest is None or newest[0] is None:
        return {}
    rows = partitions.where((F.col("snapshot_id") == newest[0]) & F.col("topic_id").isNotNull())
    return {r["topic"]: r["topic_id"] for r in rows.select("topic", "topic_id").distinct().collect()}


def lags_today(offsets: DataFrame, context: Context) -> dict[str, dict[tuple[str, int], int]]:
    lags: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
    rows = latest(offsets, context).where(F.col("lag").isNotNull()).select("group_id", "topic", "partition", "lag")
    for r in rows.collect():
        lags[r["group_id"]][(r["topic"], r["partition"])] = r["lag"]
    return lags


def detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    spark = inputs["group_members"].sparkSession
    groups = groups_today(inputs["consumer_groups"], inputs["group_members"], context)
    consumer_groups = consumer_protocol_groups_today(inputs["consumer_groups"], inputs["group_members"], context)
    outcomes: list[Outcome] = []
    verdicts: list[Verdict] = []
    error = None
    if groups or consumer_groups:
        cluster = layout(inputs["brokers"], inputs["partitions"], inputs["partition_end_offsets"], context)
        lags = lags_today(inputs["group_offsets"], context)
        ids = topic_ids(inputs["partitions"])
        improvement = int(context.thresholds.skew_spread)
        try:
            with AssignorBridge() as bridge:
                outcomes, verdicts = what_if(bridge, cluster, groups, lags, improvement, topic_ids=ids)
                # the broker assigns these: its own assignors only, never a client's
                more, judged = what_if_consumer_groups(
                    bridge, cluster, consumer_groups, lags, improvement, topic_ids=ids
                )
                outcomes, verdicts = outcomes + more, verdicts + judged
        except KafkaOpsError as e:  # no JVM here: say so per group, keep the other findings
            error = f"what-if unavailable: {e}"
    sid = context.snapshot_id
    whatif_rows = [_whatif_row(sid, o) for o in outcomes]
    if error is not None:
        everyone: list[GroupToday | ConsumerProtocolGroup] = [*groups, *consumer_groups]
        verdict_rows = [_unavailable_row(sid, g, error) for g in everyone]
    else:
        verdict_rows = [_verdict_row(sid, v) for v in verdicts]
    return {
        "assignor_whatif": spark.createDataFrame(whatif_rows, WHATIF_SCHEMA),
        "assignor_recommendations": spark.createDataFrame(verdict_rows, RECOMMENDATION_SCHEMA),
    }


def _whatif_row(sid: str, o: Outcome) -> tuple[Any, ...]:
    s = o.spread
    return (
        sid,
        o.group_id,
        o.assignor,
        o.protocol,
        o.is_current,
        s.min_partitions if s else None,
        s.max_partitions if s else None,
        s.spread if s else None,
        s.lag_spread if s else None,
        o.moved_partitions,
        o.rebalance_rounds,
        o.revoked_partitions,
        o.error,
        "warning" if o.error else "info",
    )


def _verdict_row(sid: str, v: Verdict) -> tuple[Any, ...]:
    flagged = v.recommended is not None or v.prediction_matches is False
    severity = "info" if v.error else "warning" if flagged else "ok"
    reason = v.reason
    if v.prediction_matches is False:
        reason = (
            f"Kafka's {v.assignor} assignor would not reproduce today's assignment: the next rebalance moves "
            f"{v.prediction_moves} partitions; " + reason
        )
    t = v.today
    return (
        sid,
        v.group_id,
        v.assignor,
        v.members,
        t.min_partitions,
        t.max_partitions,
        t.spread,
        t.lag_spread,
        v.prediction_matches,
        v.prediction_moves,
        v.recommended,
        v.recommended_protocol,
        reason,
        v.error,
        severity,
    )


def _unavailable_row(sid: str, g: GroupToday | ConsumerProtocolGroup, error: str) -> tuple[Any, ...]:
    return (
        sid,
        g.group_id,
        g.assignor,
        len(g.members),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        "",
        error,
        "info",
    )


DETECTOR = Detector(
    name="assignor_whatif",
    tables=("consumer_groups", "group_members", "group_offsets", "partition_end_offsets", "brokers", "partitions"),
    detect=detect,
    outputs=("assignor_whatif", "assignor_recommendations"),
    source=GROUP_COMMIT_TABLE,
)
