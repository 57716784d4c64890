"""Open, long-open and hanging transactions, and the read_committed consumers they hold back.

A transaction open on a partition pins its last stable offset (LSO) at the transaction's first
offset there: a `read_committed` consumer reads no further until it ends, however far the high
watermark moves. The coordinator aborts a transaction whose producer died once
`transaction.timeout.ms` has passed; a hanging one (the partition's leader holds it open, no
coordinator has it as ongoing there, KIP-664) is never ended by Kafka and needs an operator.

A collection reads the leaders (DescribeProducers) before the coordinators, so a transaction that
ends between the two reads, its markers not yet written, looks hanging for that one collection.
A transaction is therefore `hanging` only when the previous group collection saw the same one
(producer, partition, start offset) hanging too; seen once, it is `suspected_hanging`: a warning,
confirmed or cleared by the next collection.

Findings table `transactions`, one row per (transaction, partition) of the latest group
collection's `open_transactions`: snapshot_id, transactional_id, producer_id, producer_epoch,
state, topic, partition, start_time, age_seconds (now - start_time; null when no coordinator
knows the transaction), timeout_ms, start_offset (its first offset on the partition), hanging
(seen hanging in this collection and the one before), suspected_hanging (seen hanging in this one only),
overdue (open longer than its own timeout: the coordinator should have aborted it),
end_offset (high watermark), last_stable_offset, groups (the groups with an offset on the
partition, sorted: their read_committed consumers are held at the LSO), problem, action (the
`kafka-transactions.sh` command, with the collection's bootstrap servers), severity: critical when
hanging, overdue or open longer than `thresholds.transaction_age_critical_s`, warning when suspected
hanging or open longer than `transaction_age_warning_s`, else ok (a transaction in progress).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE

TP = ["topic", "partition"]
SAME = ["producer_id", *TP, "start_offset"]
"""What makes a hanging transaction the same one in two collections."""


def _hanging_before(transactions: DataFrame, commits: DataFrame, context: Context) -> DataFrame:
    """SAME + `seen_before` for each transaction the group collection before the latest one saw hanging."""
    previous = (
        commits.where(F.col("captured_at") < F.lit(context.captured_at))
        .orderBy(F.desc("captured_at"), F.desc("snapshot_id"))
        .limit(1)
        .select("snapshot_id")
    )
    return (
        transactions.join(previous, "snapshot_id", "left_semi")
        .where(F.col("hanging"))
        .select(*SAME)
        .distinct()
        .withColumn("seen_before", F.lit(True))
    )


def _abort(bootstrap: Column) -> Column:
    return F.format_string(
        "kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition %d --start-offset %d",
        bootstrap, F.col("topic"), F.col("partition"), F.col("start_offset"),
    )  # fmt: skip


def _find_hanging(bootstrap: Column) -> Column:
    return F.format_string(
        "kafka-transactions.sh --bootstrap-server %s find-hanging --topic %s --partition %d",
        bootstrap, F.col("topic"), F.col("partition"),
    )  # fmt: skip


def detect_transactions(
    transactions: DataFrame, end_offsets: DataFrame, offsets: DataFrame, commits: DataFrame, context: Context
) -> DataFrame:
    """Pure: the window's open_transactions, partition_end_offsets, group_offsets and group_snapshots
    → `transactions`."""
    now = F.lit(context.captured_at)
    limits = context.thresholds
    bootstrap = latest(commits, context).select(F.first("bootstrap_servers").alias("bootstrap"))
    ends = latest(end_offsets, context).select(*TP, "end_offset", "last_stable_offset")
    readers = latest(offsets, context).groupBy(*TP).agg(F.array_sort(F.collect_set("group_id")).alias("groups"))
    now_open = latest(transactions, context).withColumnRenamed("hanging", "hanging_now")
    before = _hanging_before(transactions, commits, context).alias("b")
    same = [now_open[c].eqNullSafe(before[c]) for c in SAME]  # a hanging one may have no known start offset
    confirmed = now_open.join(before, same, "left").select(
        now_open["*"],
        (F.col("hanging_now") & F.coalesce(F.col("b.seen_before"), F.lit(False))).alias("hanging"),
        (F.col("hanging_now") & F.col("b.seen_before").isNull()).alias("suspected_hanging"),
    )
    found = (
        confirmed.join(ends, TP, "left")
        .join(readers, TP, "left")
        .crossJoin(bootstrap)
        .withColumn("groups", F.coalesce(F.col("groups"), F.array().cast("array<string>")))
        .withColumn("age_seconds", (F.unix_micros(now) - F.unix_micros("start_time")).cast("double") / 1e6)
        .withColumn("overdue", F.coalesce(F.col("age_seconds") * 1000 > F.col("timeout_ms"), F.lit(False)))
    )
    who = F.when(
        F.col("transactional_id").isNotNull(),
        F.format_string("transaction %s (producer %d, epoch %d)", "transactional_id", "producer_id", "producer_epoch"),
    ).otherwise(
        F.format_string("producer %d (epoch %d), no coordinator has its transaction", "producer_id", "producer_epoch")
    )
    held = F.when(
        F.col("last_stable_offset") < F.col("end_offset"),
        F.format_string(
            "; last stable offset %d < high watermark %d: read_committed consumers%s wait at %d",
            "last_stable_offset", "end_offset",
            F.when(F.size("groups") > 0, F.concat(F.lit(" of "), F.array_join("groups", ", "))).otherwise(F.lit("")),
            "last_stable_offset",
        ),
    ).otherwise(F.lit(""))  # fmt: skip
    since = F.when(F.col("start_offset").isNotNull(), F.format_string(" since offset %d", "start_offset")).otherwise("")
    opened = F.when(F.col("age_seconds").isNotNull(), F.format_string(" for %.0f s", "age_seconds")).otherwise("")
    kind = (
        F.when(F.col("hanging"), F.lit("hanging: "))
        .when(F.col("suspected_hanging"), F.lit("possibly hanging (seen once; the next collection tells): "))
        .when(F.col("overdue"), F.lit("open past its timeout: "))
        .otherwise(F.lit(""))
    )
    problem = F.concat(
        kind, who, F.lit(" open on "), F.col("topic"), F.lit("-"), F.col("partition").cast("string"),
        since, opened, held,
    )  # fmt: skip
    abort = F.when(F.col("start_offset").isNotNull(), _abort(F.col("bootstrap")))
    action = (
        F.when(
            F.col("hanging") | F.col("suspected_hanging") | F.col("overdue"),
            F.concat(
                F.lit("confirm with "), _find_hanging(F.col("bootstrap")),
                F.lit(", then abort it: "), F.coalesce(abort, F.lit("(start offset unknown)")),
            ),
        )
        .otherwise(
            F.concat(
                F.lit("its producer keeps it open: check that producer (a stuck or slow transaction); the coordinator "
                      "aborts it after transaction.timeout.ms ("),
                F.coalesce((F.col("timeout_ms") / 1000).cast("long").cast("string"), F.lit("?")),
                F.lit(" s); to end it now: "),
                F.coalesce(abort, F.lit("(start offset unknown)")),
            )
        )
    )  # fmt: skip
    age = F.col("age_seconds")
    severity = (
        F.when(F.col("hanging") | F.col("overdue") | (age > limits.transaction_age_critical_s), "critical")
        .when(F.col("suspected_hanging") | (age > limits.transaction_age_warning_s), "warning")
        .otherwise("ok")
    )
    return found.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        "transactional_id", "producer_id", "producer_epoch", "state", *TP, "start_time", "age_seconds",
        "timeout_ms", "start_offset", "hanging", "suspected_hanging", "overdue", "end_offset", "last_stable_offset",
        "groups",
        problem.alias("problem"), action.alias("action"), severity.alias("severity"),
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    found = detect_transactions(
        inputs["open_transactions"],
        inputs["partition_end_offsets"],
        inputs["group_offsets"],
        inputs[GROUP_COMMIT_TABLE],
        context,
    )
    return {"transactions": found}


DETECTOR = Detector(
    name="transactions",
    tables=("open_transactions", "partition_end_offsets", "group_offsets", GROUP_COMMIT_TABLE),
    detect=_detect,
    outputs=("transactions",),
    source=GROUP_COMMIT_TABLE,
)
