"""Leader balance in the latest snapshot, by both of Kafka's rules; severities follow the rule of the
controller the snapshot's cluster kind runs (the `source` of its `snapshots` commit).

A partition's replicas are its assignment minus the replicas a reassignment is still adding
(order kept); its *preferred leader* is the first of them (none when the assignment is empty:
such a partition is never judged, as in Kafka).

* ZooKeeper-mode controller rule (per broker): imbalance ratio = partitions whose preferred
  leader is this broker but which are led by another broker or by nobody (leader -1), over the
  partitions whose preferred leader it is; the controller rebalances a broker whose ratio is
  above `leader.imbalance.per.broker.percentage` (`thresholds.leader_imbalance_percent`).
* KRaft rule (per partition): every partition not led by its preferred leader counts.

Topics pending deletion are left out entirely (Kafka refuses to elect leaders for them, "The topic
is being deleted"; see `topic_deletions`).

Partitions without a state znode (`has_state` false: just created, or state lost) have no leader
to judge: they count in a broker's `preferred` and in `partitions`, but never as led by another
and are never listed (exactly the controller's rule, which skips partitions without leadership
info; `isr_health` leaves them out too).

Findings tables (every row also carries `snapshot_id`, the context's):

`leader_balance_brokers`, one row per broker that is registered, is a preferred leader or leads
a partition: broker_id, registered, leaders (partitions it leads), preferred (partitions whose
preferred leader it is), preferred_led_by_other, imbalance_ratio (preferred_led_by_other /
preferred; 0.0 when preferred is 0), imbalanced (imbalance_ratio × 100 above the threshold; an
unregistered preferred leader is imbalanced as soon as it is preferred anywhere, as in the
controller), severity (warning when the rule of the snapshot's cluster kind flags the broker:
imbalanced on ZooKeeper, any preferred_led_by_other on KRaft; else ok).

`leader_balance_partitions`, one row per partition (with state) not led by its preferred leader:
topic, partition, preferred_leader, leader (-1 = none), replicas (the assignment, as above),
isr, fixable (a preferred-leader election would fix it now), blocked_reason (null when
fixable, else the first of "partition is being reassigned" (adding or removing replicas),
"preferred replica is down" (not registered), "preferred replica is not in the ISR"),
action ("run kafka_preferred_leader_election" when fixable, else null), severity (fixable:
warning; blocked: info).

`leader_balance_cluster`, exactly one row (also with no partitions or brokers):
registered_brokers, partitions, non_preferred (KRaft rule count), fixable, imbalanced_brokers
(ZooKeeper rule, over every row of `leader_balance_brokers`), max_leaders and mean_leaders (over
registered brokers, those leading nothing included; 0 and 0.0 when none is registered), skew
(max / mean; null when the mean is 0), source (the snapshot's cluster kind, `zookeeper` or `kraft`,
from the `snapshots` commit log; null there means zookeeper), zk_rule_triggered (some broker
imbalanced), kraft_rule_triggered (non_preferred > 0), severity (warning when the rule of the
cluster's own controller triggers, info when only the other kind's does, else ok; since every
imbalanced broker has a partition led by another, a KRaft snapshot is never info).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.detectors.topic_deletions import without_pending_deletions
from kafka_ops.model.leadership import PREFERRED_DOWN, PREFERRED_NOT_IN_ISR, REASSIGNING

ELECTION_ACTION = "run kafka_preferred_leader_election"
NO_LEADER = -1
ZOOKEEPER = "zookeeper"
KRAFT = "kraft"


def assignment() -> Column:
    """`replicas` minus `adding_replicas`, in order."""
    return F.filter("replicas", lambda r: ~F.coalesce(F.array_contains("adding_replicas", r), F.lit(False)))


def _non_empty(column: str) -> Column:
    return F.coalesce(F.size(column) > 0, F.lit(False))


def judge_partitions(partitions: DataFrame, brokers: DataFrame) -> DataFrame:
    """Every partition of one snapshot with its preferred leader, `led_by_other` (has state, has
    a preferred leader, and its leader is another broker or none), `fixable` and
    `blocked_reason`."""
    registered = brokers.select(F.col("broker_id").alias("preferred_leader"), F.lit(True).alias("preferred_registered"))
    frame = partitions.select(
        "topic",
        "partition",
        assignment().alias("replicas"),
        "isr",
        "leader",
        F.coalesce("has_state", F.lit(False)).alias("has_state"),
        (_non_empty("adding_replicas") | _non_empty("removing_replicas")).alias("reassigning"),
    ).select("*", F.get("replicas", 0).alias("preferred_leader"))
    preferred = F.col("preferred_leader")
    in_isr = F.coalesce(F.array_contains("isr", preferred), F.lit(False))
    blocked_reason = (
        F.when(F.col("reassigning"), REASSIGNING)
        .when(F.col("preferred_registered").isNull(), PREFERRED_DOWN)
        .when(~in_isr, PREFERRED_NOT_IN_ISR)
    )
    led_by_other = F.col("has_state") & preferred.isNotNull() & ~F.col("leader").eqNullSafe(preferred)
    return (
        frame.join(registered, "preferred_leader", "left")
        .select("*", led_by_other.alias("led_by_other"), blocked_reason.alias("blocked_reason"))
        .select("*", F.col("blocked_reason").isNull().alias("fixable"))
    )


def _role(broker: Column, **counts: int | Column) -> Column:
    """One broker's share of a partition (or its registration): 0/1 per counted field."""
    fields = ("registered", "leads", "preferred", "led_by_other", "fixable")
    values = [F.lit(counts.get(f, 0)).cast("int").alias(f) for f in fields]
    return F.struct(broker.alias("broker_id"), *values)


def broker_counts(judged: DataFrame, brokers: DataFrame) -> DataFrame:
    """Per broker: registered, leaders, preferred, preferred_led_by_other, fixable (of those, how
    many an election fixes now). One extra row with a null broker_id holds the partitions
    without a preferred leader, so that `preferred` summed over all rows counts every partition
    and the cluster row needs no second pass over the partitions."""
    led = F.col("led_by_other")
    roles = judged.select(
        F.explode(
            F.array(
                _role(F.col("preferred_leader"), preferred=1, led_by_other=led, fixable=led & F.col("fixable")),
                _role(F.when(F.col("has_state") & (F.col("leader") != NO_LEADER), F.col("leader")), leads=1),
            )
        ).alias("role")
    ).select("role.*")
    # drop the "leads" roles of leaderless partitions; keep every "preferred" role
    return (
        roles.where(F.col("broker_id").isNotNull() | (F.col("preferred") == 1))
        .unionByName(brokers.select(_role(F.col("broker_id"), registered=1).alias("role")).select("role.*"))
        .groupBy("broker_id")
        .agg(
            (F.max("registered") == 1).alias("registered"),
            F.sum("leads").alias("leaders"),
            F.sum("preferred").alias("preferred"),
            F.sum("led_by_other").alias("preferred_led_by_other"),
            F.sum("fixable").alias("fixable"),
        )
    )


def _imbalanced(imbalance_percent: float) -> Column:
    # ratio × 100 > percent, cross-multiplied so that e.g. 7/10 against 70 % stays exact
    return F.col("preferred_led_by_other") * 100 > F.col("preferred") * F.lit(float(imbalance_percent))


def cluster_kind(snapshots: DataFrame, snapshot_id: str) -> DataFrame:
    """Exactly one row, one column `source`: the cluster kind of snapshot `snapshot_id` (zookeeper when
    its commit has none: written before sources existed)."""
    of_snapshot = snapshots.where(F.col("snapshot_id") == snapshot_id)
    return of_snapshot.agg(F.coalesce(F.first("source"), F.lit(ZOOKEEPER)).alias("source"))


def _is_kraft() -> Column:
    return F.col("source") == KRAFT


def broker_balance(counts: DataFrame, imbalance_percent: float, kind: DataFrame) -> DataFrame:
    """`leader_balance_brokers` without snapshot_id, from `broker_counts` and `cluster_kind`."""
    other, preferred = F.col("preferred_led_by_other"), F.col("preferred")
    imbalanced = _imbalanced(imbalance_percent)
    flagged = F.when(_is_kraft(), other > 0).otherwise(imbalanced)
    return (
        counts.where(F.col("broker_id").isNotNull())
        .crossJoin(kind)
        .select(
            "broker_id",
            "registered",
            "leaders",
            "preferred",
            "preferred_led_by_other",
            F.when(preferred == 0, F.lit(0.0)).otherwise(other / preferred).alias("imbalance_ratio"),
            imbalanced.alias("imbalanced"),
            F.when(flagged, "warning").otherwise("ok").alias("severity"),
        )
    )


def cluster_balance(counts: DataFrame, imbalance_percent: float, kind: DataFrame) -> DataFrame:
    """`leader_balance_cluster` without snapshot_id, from `broker_counts` and `cluster_kind`: always
    exactly one row."""
    registered = F.col("registered")
    # the null-broker row never counts as imbalanced: none of its partitions is led by another
    totals = counts.agg(
        F.count(F.when(registered, 1)).alias("registered_brokers"),
        F.coalesce(F.sum("preferred"), F.lit(0)).alias("partitions"),
        F.coalesce(F.sum("preferred_led_by_other"), F.lit(0)).alias("non_preferred"),
        F.coalesce(F.sum("fixable"), F.lit(0)).alias("fixable"),
        F.count(F.when(_imbalanced(imbalance_percent), 1)).alias("imbalanced_brokers"),
        F.coalesce(F.max(F.when(registered, F.col("leaders"))), F.lit(0)).alias("max_leaders"),
        F.coalesce(F.avg(F.when(registered, F.col("leaders"))), F.lit(0.0)).alias("mean_leaders"),
    )
    zk_rule = F.col("imbalanced_brokers") > 0
    kraft_rule = F.col("non_preferred") > 0
    controller_rule = F.when(_is_kraft(), kraft_rule).otherwise(zk_rule)
    mean = F.col("mean_leaders")
    return totals.crossJoin(kind).select(
        "registered_brokers",
        "partitions",
        "non_preferred",
        "fixable",
        "imbalanced_brokers",
        "max_leaders",
        "mean_leaders",
        F.when(mean > 0, F.col("max_leaders") / mean).alias("skew"),
        "source",
        zk_rule.alias("zk_rule_triggered"),
        kraft_rule.alias("kraft_rule_triggered"),
        F.when(controller_rule, "warning").when(zk_rule | kraft_rule, "info").otherwise("ok").alias("severity"),
    )


def partition_balance(judged: DataFrame) -> DataFrame:
    """`leader_balance_partitions` without snapshot_id."""
    fixable = F.col("fixable")
    return judged.where(F.col("led_by_other")).select(
        "topic", "partition", "preferred_leader", "leader", "replicas", "isr", "fixable", "blocked_reason",
        F.when(fixable, ELECTION_ACTION).alias("action"),
        F.when(fixable, "warning").otherwise("info").alias("severity"),
    )  # fmt: skip


def detect_leader_balance(
    partitions: DataFrame,
    brokers: DataFrame,
    admin_requests: DataFrame,
    snapshots: DataFrame,
    *,
    snapshot_id: str,
    imbalance_percent: float,
) -> dict[str, DataFrame]:
    """Pure: one snapshot's partitions, brokers and admin requests, and the `snapshots` commit log
    (its row for `snapshot_id` tells the cluster kind) → the three findings tables, tagged with
    `snapshot_id`."""
    judged = judge_partitions(without_pending_deletions(partitions, admin_requests), brokers)
    counts = broker_counts(judged, brokers)
    kind = cluster_kind(snapshots, snapshot_id)
    tables = {
        "leader_balance_brokers": broker_balance(counts, imbalance_percent, kind),
        "leader_balance_partitions": partition_balance(judged),
        "leader_balance_cluster": cluster_balance(counts, imbalance_percent, kind),
    }
    return {name: _tagged(frame, snapshot_id) for name, frame in tables.items()}


def _tagged(frame: DataFrame, snapshot_id: str) -> DataFrame:
    return frame.select(F.lit(snapshot_id).alias("snapshot_id"), "*")


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    tables = ("partitions", "brokers", "admin_requests")
    partitions, brokers, admin_requests = (latest(inputs[t], context) for t in tables)
    return detect_leader_balance(
        partitions,
        brokers,
        admin_requests,
        inputs["snapshots"],
        snapshot_id=context.snapshot_id,
        imbalance_percent=context.thresholds.leader_imbalance_percent,
    )


DETECTOR = Detector(
    name="leader_balance",
    tables=("partitions", "brokers", "admin_requests", "snapshots"),
    detect=_detect,
    outputs=("leader_balance_brokers", "leader_balance_partitions", "leader_balance_cluster"),
    latest_only=("partitions",),
)
