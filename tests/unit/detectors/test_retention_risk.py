from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from kafka_ops.detectors.retention_risk import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, CONFIGS, PARTITIONS, partition
from tests.unit.detectors.group_frames import OFFSETS, Row, context, frame, minutes_ago, offset, sid

ENDS = "snapshot_id string, captured_at timestamp, topic string, partition int, end_offset long, log_start_offset long"
SNAPSHOTS = "snapshot_id string, captured_at timestamp"
SIZES = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, broker_id int, log_dir string, "
    "size_bytes long, offset_lag long, is_future boolean"
)
HOUR_MS = 3_600_000
META = "z1"
META_AT = AT - timedelta(minutes=2)


def end(topic: str, p: int, end_offset: int, start: int | None, minutes: float = 0) -> Row:
    """A partition_end_offsets row of the collection `minutes` before AT."""
    return (sid(minutes), minutes_ago(minutes), topic, p, end_offset, start)


def config(entity_type: str, name: str, key: str, value: str, snapshot: str = META) -> Row:
    at = META_AT if snapshot == META else AT + timedelta(minutes=1)
    return (snapshot, at, entity_type, name, key, value)


def size(topic: str, p: int, broker: int, size_bytes: int, *, future: bool = False) -> Row:
    return (META, META_AT, topic, p, broker, "/data", size_bytes, 0, future)


def layout(*topics: tuple[str, int], leader: int = 1) -> list[Row]:
    """PARTITIONS rows of the metadata snapshot: `partitions` of each topic, replicas [1, 2, 3] led by `leader`."""
    return [
        partition(t, p, [1, 2, 3], [1, 2, 3], leader, snapshot=META, at=META_AT) for t, n in topics for p in range(n)
    ]


def detect(
    spark: SparkSession,
    offsets: list[Row],
    ends: list[Row],
    *,
    configs: Sequence[Row] = (),
    partitions: Sequence[Row] = (),
    sizes: Sequence[Row] = (),
    snapshots: list[Row] | None = None,
    thresholds: Thresholds | None = None,
) -> tuple[dict[tuple[str, str, int], dict[str, Any]], dict[str, dict[str, Any]]]:
    """Both findings tables, partitions by (group, topic, partition) and groups by group id."""
    inputs: dict[str, DataFrame] = {
        "group_offsets": frame(spark, OFFSETS, offsets),
        "partition_end_offsets": frame(spark, ENDS, ends),
        "snapshots": frame(spark, SNAPSHOTS, [(META, META_AT)] if snapshots is None else snapshots),
        "configs": frame(spark, CONFIGS, list(configs)),
        "partitions": frame(spark, PARTITIONS, list(partitions)),
        "replica_sizes": frame(spark, SIZES, list(sizes)),
    }
    found = DETECTOR.detect(inputs, context(thresholds))
    rows = {
        (r["group_id"], r["topic"], r["partition"]): r.asDict() for r in found["retention_risk_partitions"].collect()
    }
    groups = {r["group_id"]: r.asDict() for r in found["retention_risk_groups"].collect()}
    return rows, groups


def pick(row: dict[str, Any], *columns: str) -> tuple[Any, ...]:
    """The row's `columns`, times in UTC (Spark gives them back naive, in the session's zone: UTC)."""
    return tuple(row[c].replace(tzinfo=UTC) if isinstance(row[c], datetime) else row[c] for c in columns)


def test_time_based_eta_is_a_lower_bound_from_the_first_unconsumed_record(spark: SparkSession) -> None:
    ends = [end("t", p, 500, 50) for p in range(3)] + [end("long", 0, 500, 0), end("max", 0, 500, 0)]
    offsets = [
        # first unconsumed record written 40 min ago, retention.ms 1 h: deletable 20 min from now at the earliest
        offset("late", "t", 0, 100, 500, record_time=minutes_ago(40)),
        offset("soon", "t", 1, 100, 500, record_time=minutes_ago(50)),  # 10 min: within the critical band
        offset("overdue", "t", 2, 100, 500, record_time=minutes_ago(70)),  # due: waiting for its segment
        offset("done", "t", 0, 500, 500),  # nothing unconsumed
        offset("fine", "long", 0, 100, 500, record_time=minutes_ago(30)),  # retention.ms 2 h: 90 min left
        offset("ever", "max", 0, 100, 500, record_time=minutes_ago(30)),  # retention.ms Long.MAX_VALUE: no overflow
    ]
    configs = [config("topic", "t", "retention.ms", str(HOUR_MS)), config("topic", "long", "retention.ms", "7200000"),
               config("topic", "max", "retention.ms", str(2**63 - 1)),
               # a later snapshot than the collection: not what the collection is judged on
               config("topic", "t", "retention.ms", str(24 * HOUR_MS), snapshot="z2")]  # fmt: skip
    snapshots = [(META, META_AT), ("z2", AT + timedelta(minutes=1))]
    rows, _ = detect(spark, offsets, ends, configs=configs, partitions=layout(("t", 3), ("long", 1), ("max", 1)),
                     snapshots=snapshots)  # fmt: skip
    columns = ("state", "eta_seconds", "eta_basis", "eta_is_lower_bound", "retention_ms", "retention_ms_source",
               "severity")  # fmt: skip
    assert pick(rows[("late", "t", 0)], *columns) == ("at_risk", 1200.0, "retention.ms", True, HOUR_MS, "topic",
                                                      "warning")  # fmt: skip
    assert pick(rows[("soon", "t", 1)], *columns) == ("at_risk", 600.0, "retention.ms", True, HOUR_MS, "topic",
                                                      "critical")  # fmt: skip
    assert pick(rows[("overdue", "t", 2)], *columns)[:2] == ("at_risk", 0.0)
    assert pick(rows[("done", "t", 0)], "state", "eta_seconds", "reason", "severity") == (
        "ok", None, "nothing unconsumed: the group is at the end of the partition", "ok"
    )  # fmt: skip
    assert pick(rows[("fine", "long", 0)], *columns) == ("ok", 5400.0, "retention.ms", True, 7200000, "topic", "ok")
    assert pick(rows[("late", "t", 0)], "first_unconsumed_at") == (minutes_ago(40),)
    ever = rows[("ever", "max", 0)]
    assert (ever["state"], ever["severity"], ever["eta_seconds"] > 9e15) == ("ok", "ok", True)
    # retention.bytes is Kafka's default (-1): no size figure
    assert pick(rows[("late", "t", 0)], "retention_bytes", "retention_bytes_source", "size_eta_seconds") == (
        -1, "kafka_default", None
    )  # fmt: skip


def test_size_based_eta_at_the_current_produce_rate(spark: SparkSession) -> None:
    # retention.bytes 1,000 (the cluster-wide dynamic default), no time limit (topic): 2,000 bytes for offsets
    # 0..200, 10 bytes a record, so the log keeps 100 records; the producer adds 60 records in 10 min (0.1/s)
    configs = [config("broker", "<default>", "log.retention.bytes", "1000"),
               config("topic", "s", "retention.ms", "-1")]  # fmt: skip
    ends = [end("s", p, e, 0, m) for p in (0, 1) for m, e in ((30, 100), (10, 140), (0, 200))]
    offsets = [
        offset("behind", "s", 0, 150, 200),  # 50 records from its offset on: 50 more to go, 500 s
        offset("far", "s", 1, 90, 200),  # 110 from its offset on: already beyond what the log keeps
    ]
    sizes = [size("s", p, b, 2000 if b == 1 else 1900) for p in (0, 1) for b in (1, 2, 3)]
    sizes.append(size("s", 0, 2, 9_999_999, future=True))  # a replica moving between log dirs: not counted
    rows, _ = detect(spark, offsets, ends, configs=configs, partitions=layout(("s", 2)), sizes=sizes,
                     thresholds=Thresholds(load_window_hours=10 / 60))  # fmt: skip
    columns = ("state", "eta_seconds", "eta_basis", "eta_is_lower_bound", "size_bytes", "produce_rate",
               "retention_bytes", "retention_bytes_source", "retention_ms_source", "time_eta_seconds",
               "severity")  # fmt: skip
    assert pick(rows[("behind", "s", 0)], *columns) == (
        "at_risk", 500.0, "retention.bytes", False, 2000, 0.1, 1000, "broker_default", "topic", None, "critical"
    )  # fmt: skip
    assert pick(rows[("far", "s", 1)], "state", "eta_seconds", "size_eta_seconds") == ("at_risk", 0.0, 0.0)


def test_the_earliest_basis_wins_and_the_leaders_broker_config_applies(spark: SparkSession) -> None:
    # broker 2 (the leader) keeps 1 h, the cluster default 1 day; retention.bytes 1,000 on the topic
    configs = [config("broker", "2", "log.retention.ms", str(HOUR_MS)),
               config("broker", "<default>", "log.retention.ms", str(24 * HOUR_MS)),
               config("topic", "b", "retention.bytes", "1000")]  # fmt: skip
    ends = [end("b", 0, e, 0, m) for m, e in ((20, 100), (0, 200))]  # 100 records in 20 min
    sizes = [size("b", 0, 2, 2000)]  # 10 bytes a record: 100 kept, 60 from its offset on, 40 to go: 480 s
    by_size = offset("g", "b", 0, 140, 200, record_time=minutes_ago(50))  # by time: 600 s
    rows, _ = detect(spark, [by_size], ends, configs=configs, partitions=layout(("b", 1), leader=2), sizes=sizes)
    assert pick(rows[("g", "b", 0)], "eta_seconds", "eta_basis", "time_eta_seconds", "retention_ms_source") == (
        480.0, "retention.bytes", 600.0, "broker"
    )  # fmt: skip
    by_time = offset("g", "b", 0, 140, 200, record_time=minutes_ago(55))  # by time: 300 s, earlier
    rows, _ = detect(spark, [by_time], ends, configs=configs, partitions=layout(("b", 1), leader=2), sizes=sizes)
    assert pick(rows[("g", "b", 0)], "eta_seconds", "eta_basis", "eta_is_lower_bound") == (300.0, "retention.ms", True)


def test_lost_records_count_and_since(spark: SparkSession) -> None:
    # the log start passed "gone"'s offset 20 minutes ago; "always" was below it in every collection of the
    # window; "again" reset to the start 10 minutes ago and fell below it again since
    starts = {30: 10, 20: 15, 10: 30, 0: 60}
    ends = [end("t", p, 500, start, m) for p in (0, 1, 2) for m, start in starts.items()]
    committed = {"gone": (0, {30: 10, 20: 10, 10: 10, 0: 10}), "always": (1, dict.fromkeys(starts, -1)),
                 "again": (2, {30: 40, 20: 0, 10: 30, 0: 50})}  # fmt: skip
    offsets = [
        offset(g, "t", p, c if c >= 0 else starts[m] - 5, 500, m)
        for g, (p, by_minute) in committed.items()
        for m, c in by_minute.items()
    ]
    rows, groups = detect(spark, offsets, ends, configs=[config("topic", "t", "retention.ms", str(HOUR_MS))],
                          partitions=layout(("t", 3)))  # fmt: skip
    columns = ("state", "records_lost", "lost_since", "lost_since_window_start", "eta_seconds", "severity")
    assert pick(rows[("gone", "t", 0)], *columns) == ("lost", 50, minutes_ago(20), False, None, "critical")
    assert pick(rows[("always", "t", 1)], *columns) == ("lost", 5, minutes_ago(30), True, None, "critical")
    assert pick(rows[("again", "t", 2)], *columns) == ("lost", 10, minutes_ago(0), False, None, "critical")
    assert pick(groups["gone"], "state", "lost_partitions", "records_lost", "lost_since", "lost_topic",
                "lost_partition", "severity") == ("lost", 1, 50, minutes_ago(20), "t", 0, "critical")  # fmt: skip


def test_explicit_non_answers(spark: SparkSession) -> None:
    topics = ("compacted", "both", "forever", "unread", "noshare")
    ends = [end(t, 0, 500, 0) for t in topics] + [end("brandnew", 0, 500, 0), end("nostart", 0, 500, None)]
    configs = [config("topic", "compacted", "cleanup.policy", "compact"),
               config("topic", "both", "cleanup.policy", "compact,delete"),
               config("topic", "both", "retention.ms", str(HOUR_MS)),
               config("topic", "forever", "retention.ms", "-1"),
               config("topic", "nostart", "retention.ms", "-1"),
               config("topic", "nostart", "retention.bytes", "1000")]  # fmt: skip
    offsets = [
        offset("g", "compacted", 0, 100, 500, record_time=minutes_ago(50)),
        offset("g", "both", 0, 100, 500, record_time=minutes_ago(50)),  # compact,delete: retention applies
        offset("g", "forever", 0, 100, 500, record_time=minutes_ago(50)),
        offset("g", "unread", 0, 100, 500),  # a lagging partition whose first record's time was not read
        offset("g", "brandnew", 0, 100, 500, record_time=minutes_ago(50)),  # created after the metadata snapshot
        offset("g", "nostart", 0, 100, 500),  # retention.bytes only, no log start offset read
        offset("g", "noshare", 0, None, 500),  # no committed offset
    ]
    rows, groups = detect(spark, offsets, ends, configs=configs,
                          partitions=layout(*((t, 1) for t in (*topics, "nostart"))),
                          sizes=[size("nostart", 0, 1, 2000)])  # fmt: skip
    state = {t: pick(r, "state", "eta_seconds", "reason", "severity") for (_, t, _), r in rows.items()}
    assert state == {
        "compacted": ("not_applicable", None, "cleanup.policy=compact: compaction keeps each key's latest record and "
                      "never moves the log start offset, so retention loses no position here (DeleteRecords still "
                      "can: that shows as lost)", "ok"),
        "both": ("at_risk", 600.0, None, "critical"),
        "forever": ("unknown", None, "retention.ms and retention.bytes are both -1: retention deletes nothing", "info"),
        "unread": ("unknown", None, "retention.ms: the collection read no time for the first unconsumed record",
                   "info"),
        "brandnew": ("unknown", None, "the topic is not in the latest metadata snapshot: its retention is unknown",
                     "info"),
        "nostart": ("unknown", None, "retention.bytes: the collection read no log start offset", "info"),
        "noshare": ("unknown", None, "the group has no committed offset on the partition", "info"),
    }  # fmt: skip
    counts = ("state", "partitions", "at_risk_partitions", "unknown_partitions", "records_lost", "eta_seconds",
              "eta_topic", "severity")  # fmt: skip
    assert pick(groups["g"], *counts) == ("at_risk", 7, 1, 5, 0, 600.0, "both", "critical")


def test_no_metadata_snapshot_means_unknown_retention_not_kafkas_defaults(spark: SparkSession) -> None:
    offsets = [offset("g", "t", 0, 100, 500, record_time=minutes_ago(50)), offset("g", "t", 1, 10, 500)]
    ends = [end("t", 0, 500, 0), end("t", 1, 500, 60)]
    # the only metadata snapshot was captured after the collection
    rows, groups = detect(spark, offsets, ends, configs=[config("topic", "t", "retention.ms", "1", snapshot="z2")],
                          snapshots=[("z2", AT + timedelta(minutes=1))])  # fmt: skip
    assert pick(rows[("g", "t", 0)], "state", "retention_ms", "retention_ms_source", "reason") == (
        "unknown", None, None,
        "no metadata snapshot at or before the collection in the history window: the topic's retention is unknown",
    )  # fmt: skip
    # a loss needs no config: the log start says it
    assert pick(rows[("g", "t", 1)], "state", "records_lost") == ("lost", 50)
    assert pick(groups["g"], "state", "lost_partitions", "unknown_partitions", "severity") == ("lost", 1, 1, "critical")


def test_a_share_groups_position_is_its_start_offset(spark: SparkSession) -> None:
    share: list[Any] = list(offset("s", "t", 0, None, 500, record_time=minutes_ago(50)))
    share[8], share[11], share[7] = False, 100, 400  # no_commit false, start offset 100, the broker's lag
    configs = [config("topic", "t", "retention.ms", str(HOUR_MS))]
    rows, _ = detect(spark, [tuple(share)], [end("t", 0, 500, 0)], configs=configs, partitions=layout(("t", 1)))
    assert pick(rows[("s", "t", 0)], "committed_offset", "state", "eta_seconds") == (100, "at_risk", 600.0)
