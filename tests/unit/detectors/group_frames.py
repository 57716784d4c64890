"""Lake-shaped group tables for the group detectors' tests (see `kafka_ops.lake.schema.GROUP_TABLES`):
the columns the detectors use, typed as the lake stores them (group_offsets: every column that
differs by group type, as `lake.spark.read_table` always gives them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT

GROUPS = (
    "snapshot_id string, captured_at timestamp, group_id string, state string, protocol_type string, "
    "assignor string, member_count int, group_type string"
)
MEMBERS = (
    "snapshot_id string, captured_at timestamp, group_id string, member_id string, group_instance_id string, "
    "client_id string, host string, assigned_partitions array<struct<topic: string, partition: int>>"
)
OFFSETS = (
    "snapshot_id string, captured_at timestamp, group_id string, topic string, partition int, "
    "committed_offset long, end_offset long, lag long, no_commit boolean, committed_above_end boolean, "
    "topic_deleted boolean, start_offset long, record_timestamp timestamp"
)
COMMITS = (
    "snapshot_id string, captured_at timestamp, group_id string, topic string, partition int, "
    "committed_offset long, committed_at timestamp"
)
END_OFFSETS = "snapshot_id string, captured_at timestamp, topic string, partition int, end_offset long"
QUOTAS = (
    "snapshot_id string, captured_at timestamp, entity_path string, user string, client_id string, ip string, "
    "quota_key string, quota_value double"
)
SNAPSHOTS = "snapshot_id string, captured_at timestamp"

Row = tuple[Any, ...]


def minutes_ago(minutes: float) -> datetime:
    return AT - timedelta(minutes=minutes)


def sid(minutes: float) -> str:
    """The id of the collection captured `minutes` before AT ("now" is "m0")."""
    return f"m{minutes:g}"


def context(thresholds: Thresholds | None = None) -> Context:
    """The latest group collection: captured at AT, id "m0"."""
    return Context("c1", sid(0), AT, thresholds or Thresholds())


def offset(
    group: str, topic: str, p: int, committed: int | None, end: int | None, minutes: float = 0, *,
    record_time: datetime | None = None,
) -> Row:  # fmt: skip
    """A group_offsets row, lag and flags computed as `model.groups.offset_rows` does;
    `record_time`: the first unconsumed record's timestamp, where it was read."""
    above = committed is not None and end is not None and committed > end
    lag = None if committed is None or end is None else max(end - committed, 0)
    no_commit = committed is None
    return (sid(minutes), minutes_ago(minutes), group, topic, p, committed, end, lag, no_commit, above, False, None,
            record_time)  # fmt: skip


def group(
    group_id: str, state: str = "Stable", assignor: str = "range", members: int = 1, minutes: float = 0,
    group_type: str = "classic",
) -> Row:  # fmt: skip
    return (sid(minutes), minutes_ago(minutes), group_id, state, "consumer", assignor, members, group_type)


def member(
    group_id: str, member_id: str, assigned: list[tuple[str, int]], *, instance: str | None = None,
    client: str = "client", host: str = "/10.0.0.1", minutes: float = 0,
) -> Row:  # fmt: skip
    parts = [{"topic": t, "partition": p} for t, p in assigned]
    return (sid(minutes), minutes_ago(minutes), group_id, member_id, instance, client, host, parts)


def logged(group: str, topic: str, p: int, committed: int | None, seconds: float, read_minutes: float = 0) -> Row:
    """A group_commits row: a commit logged `seconds` before AT, read by the collection `read_minutes` before."""
    return (sid(read_minutes), minutes_ago(read_minutes), group, topic, p, committed, AT - timedelta(seconds=seconds))


def end_offset(topic: str, p: int, end: int, minutes: float = 0) -> Row:
    return (sid(minutes), minutes_ago(minutes), topic, p, end)


def columns(schema: str) -> list[str]:
    """The column names of a DDL schema string (commas inside `<...>` belong to a type)."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(schema + ","):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            names.append(schema[start:i].split(maxsplit=1)[0])
            start = i + 1
    return names


def as_dicts(schema: str, rows: list[Row]) -> list[dict[str, Any]]:
    """Rows as the lake's readers give them (column → value), for the rules that need no Spark."""
    names = columns(schema)
    return [dict(zip(names, r, strict=True)) for r in rows]


def as_utc(row: dict[str, Any]) -> dict[str, Any]:
    """A collected Spark row with its naive timestamps (the session's UTC) made aware, as the lake's are."""
    return {k: v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v for k, v in row.items()}


def frame(spark: SparkSession, schema: str, rows: list[Row]) -> DataFrame:
    return spark.createDataFrame(rows, schema)


def expect(spark: SparkSession, result: DataFrame, rows: list[Row]) -> None:
    assertDataFrameEqual(result, spark.createDataFrame(rows, result.schema))


def quota(entity_path: str, value: float, key: str = "consumer_byte_rate", *, snapshot: str = "z1",
          minutes: float = 1) -> Row:  # fmt: skip
    """A quotas row of ZooKeeper snapshot `snapshot`; user and client id read from the entity path."""
    parts = entity_path.split("/")
    names = dict(zip(parts[::2], parts[1::2], strict=False))
    return (snapshot, minutes_ago(minutes), entity_path, names.get("users"), names.get("clients"), names.get("ips"),
            key, float(value))  # fmt: skip
