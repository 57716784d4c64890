"""The pure parts of group collection: which rows exist, lag and flags, filters, lake tables."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from kafka.admin import OffsetSpec
from kafka.errors import CoordinatorLoadInProgressError, GroupAuthorizationFailedError, KafkaStorageError
from kafka.structs import OffsetAndTimestamp, TopicPartition

from kafka_ops.errors import CollectionFailed, ConfigError
from kafka_ops.lake.schema import COMMIT_TABLE, GROUP_COMMIT_TABLE, GROUP_TABLES, commit_table_of
from kafka_ops.lake.store import Lake
from kafka_ops.model.groups import (
    Commit,
    GroupOffset,
    GroupSnapshot,
    offset_rows,
)
from kafka_ops.sources.groups import collector as groups_collector
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from kafka_ops.sources.groups.tables import group_batch, group_summary
from tests.unit.snapshots import GROUP_ENDS, GROUP_PARTITIONS, GROUPS_AT, group_snapshot

EXISTING = GROUP_PARTITIONS
ENDS = GROUP_ENDS


def by_partition(rows: list[GroupOffset]) -> dict[tuple[str, int], GroupOffset]:
    return {(r.topic, r.partition): r for r in rows}


def test_lag_is_end_minus_committed() -> None:
    (row,) = offset_rows("g", {("orders", 0): Commit(60, "m")}, [], EXISTING, ENDS)
    assert row == GroupOffset("g", "orders", 0, 60, "m", 100, 40)


def test_commit_above_end_is_flagged_and_lag_clamped_at_zero() -> None:
    (row,) = offset_rows("g", {("orders", 1): Commit(75)}, [], EXISTING, ENDS)
    assert (row.committed_offset, row.end_offset, row.lag) == (75, 50, 0)
    assert row.committed_above_end and not row.no_commit and not row.topic_deleted


def test_commit_at_end_has_zero_lag_and_no_flag() -> None:
    (row,) = offset_rows("g", {("orders", 1): Commit(50)}, [], EXISTING, ENDS)
    assert row.lag == 0 and not row.committed_above_end


def test_assigned_partition_without_commit() -> None:
    rows = by_partition(offset_rows("g", {("orders", 0): Commit(10)}, [("orders", 0), ("orders", 2)], EXISTING, ENDS))
    assert sorted(rows) == [("orders", 0), ("orders", 2)]  # committed ∪ assigned, nothing invented
    row = rows[("orders", 2)]
    assert row.no_commit and row.committed_offset is None and row.lag is None
    assert row.end_offset == 0 and not row.topic_deleted


def test_negative_committed_offset_means_no_commit() -> None:
    (row,) = offset_rows("g", {("orders", 0): Commit(-1, "")}, [], EXISTING, ENDS)
    assert row.no_commit and row.committed_offset is None and row.lag is None


def test_deleted_topic_and_partition_are_flagged_without_lag() -> None:
    committed = {("gone", 0): Commit(5), ("orders", 7): Commit(3)}
    rows = by_partition(offset_rows("g", committed, [], EXISTING, ENDS))
    for key in (("gone", 0), ("orders", 7)):
        assert rows[key].topic_deleted
        assert (rows[key].end_offset, rows[key].lag) == (None, None)
        assert rows[key].committed_offset is not None and not rows[key].no_commit


def test_unknown_end_offset_leaves_lag_unknown_without_flags() -> None:
    (row,) = offset_rows("g", {("orders", 0): Commit(10)}, [], EXISTING, {})
    assert (row.end_offset, row.lag) == (None, None)
    assert not (row.no_commit or row.committed_above_end or row.topic_deleted)


def test_rows_are_sorted_by_topic_and_partition() -> None:
    committed = {("orders", 2): Commit(0), ("a", 0): Commit(0), ("orders", 0): Commit(0)}
    rows = offset_rows("g", committed, [("orders", 1)], EXISTING | {("a", 0)}, ENDS)
    assert [(r.topic, r.partition) for r in rows] == [("a", 0), ("orders", 0), ("orders", 1), ("orders", 2)]


def collector(include: str | None = None, exclude: str | None = None) -> GroupCollector:
    return GroupCollector("c1", KafkaTarget("k1:9092"), include, exclude)


@pytest.mark.parametrize(
    ("include", "exclude", "selected"),
    [
        (None, None, ["payments", "payments-audit", "console-consumer-1", "orders"]),
        ("payments.*", None, ["payments", "payments-audit"]),
        ("payments", None, ["payments"]),  # the whole id must match
        (None, "console-consumer-.*", ["payments", "payments-audit", "orders"]),
        ("payments.*", ".*-audit", ["payments"]),
    ],
)
def test_include_and_exclude_patterns(include: str | None, exclude: str | None, selected: list[str]) -> None:
    ids = ["payments", "payments-audit", "console-consumer-1", "orders"]
    assert [g for g in ids if collector(include, exclude).selected(g)] == selected


def test_invalid_pattern_is_named() -> None:
    with pytest.raises(ConfigError, match=r"group exclude pattern '\(' is not a valid regular expression"):
        collector(exclude="(")


def test_target_repr_never_shows_options() -> None:
    target = KafkaTarget("k1:9092", {"sasl_plain_password": "s3cr3t"})
    assert "s3cr3t" not in repr(target) and "k1:9092" in repr(target)


def test_every_group_table_matches_its_documented_schema() -> None:
    batch = group_batch(group_snapshot())
    assert set(batch.tables) == set(GROUP_TABLES)
    assert batch.commit_table == GROUP_COMMIT_TABLE
    for name, table in batch.tables.items():
        assert table.schema.equals(GROUP_TABLES[name]), name
        assert set(table.column("snapshot_id").to_pylist()) == {"g1"}, name


def test_record_times_and_read_committed_lag_rows() -> None:
    tables = group_batch(group_snapshot()).tables
    columns = ["topic", "partition", "lag", "record_timestamp", "record_timestamp_type", "read_committed_lag"]
    rows = [r for r in tables["group_offsets"].select(columns).to_pylist() if r["topic"] == "orders"]
    assert rows == [
        {"topic": "orders", "partition": 0, "lag": 40, "record_timestamp": GROUPS_AT - timedelta(seconds=90),
         "record_timestamp_type": "CreateTime", "read_committed_lag": 20},
        {"topic": "orders", "partition": 1, "lag": 0, "record_timestamp": None, "record_timestamp_type": None,
         "read_committed_lag": 0},
        {"topic": "orders", "partition": 2, "lag": None, "record_timestamp": None, "record_timestamp_type": None,
         "read_committed_lag": None},
    ]  # fmt: skip
    ends = tables["partition_end_offsets"].select(["partition", "end_offset", "last_stable_offset"]).to_pylist()
    assert ends[0] == {"partition": 0, "end_offset": 100, "last_stable_offset": 80}
    (txn,) = tables["open_transactions"].to_pylist()
    assert (txn["transactional_id"], txn["topic"], txn["partition"], txn["start_offset"]) == ("tx-1", "orders", 0, 80)
    assert (txn["start_time"], txn["hanging"]) == (GROUPS_AT - timedelta(minutes=20), False)


def test_group_table_rows() -> None:
    tables = group_batch(group_snapshot()).tables
    assert tables["consumer_groups"].select(["group_id", "state", "assignor", "member_count"]).to_pylist() == [
        {"group_id": "stable", "state": "Stable", "assignor": "range", "member_count": 2},
        {"group_id": "committer", "state": "Empty", "assignor": "", "member_count": 0},
    ]
    members = tables["group_members"].to_pylist()
    assert members[0]["assigned_partitions"] == [
        {"topic": "orders", "partition": 0},
        {"topic": "orders", "partition": 1},
    ]
    assert members[1]["group_instance_id"] == "static-b"
    offsets = {(r["topic"], r["partition"]): r for r in tables["group_offsets"].to_pylist()}
    assert offsets[("orders", 0)]["lag"] == 40
    assert offsets[("orders", 1)]["committed_above_end"] and offsets[("orders", 1)]["lag"] == 0
    assert offsets[("orders", 2)]["no_commit"] and offsets[("orders", 2)]["lag"] is None
    assert offsets[("gone", 0)]["topic_deleted"]
    assert tables["partition_end_offsets"].select(["topic", "partition", "end_offset"]).to_pylist() == [
        {"topic": "orders", "partition": p, "end_offset": e} for p, e in [(0, 100), (1, 50), (2, 0)]
    ]
    (commit,) = tables[GROUP_COMMIT_TABLE].to_pylist()
    assert (commit["group_count"], commit["member_count"], commit["offset_count"]) == (2, 2, 4)
    assert (commit["partition_count"], commit["total_lag"], commit["issue_count"]) == (3, 40, 1)


def test_summary() -> None:
    info = group_summary(group_snapshot())
    assert info["states"] == {"Empty": 1, "Stable": 1}
    assert (info["no_commit"], info["committed_above_end"], info["topic_deleted"]) == (1, 1, 1)


def test_group_tables_have_their_own_commit_log() -> None:
    for table in GROUP_TABLES:
        assert commit_table_of(table) == GROUP_COMMIT_TABLE
    assert commit_table_of("partitions") == COMMIT_TABLE


def test_published_group_batch_is_read_back_without_touching_zookeeper_snapshots(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    lake.publish(group_batch(group_snapshot("g1")))
    assert lake.snapshots("c1").num_rows == 0  # the ZooKeeper commit log is untouched
    offsets = lake.read("group_offsets", "c1")
    assert offsets.num_rows == 4 and set(offsets.column("snapshot_id").to_pylist()) == {"g1"}
    ends = lake.read("partition_end_offsets", "c1")
    assert ends.column("captured_at").to_pylist()[0] == GROUPS_AT
    assert isinstance(lake.read("group_members", "c1").schema.field("assigned_partitions").type, pa.ListType)


class ScriptedAdmin:
    """Stands in for KafkaAdminClient where the sandbox cannot produce the fault: a broker that
    refuses one group (authorization) and answers describe/offsets per group."""

    def __init__(self, described: dict[str, dict[str, object]], refused: str) -> None:
        self.described, self.refused = described, refused
        self.offset_calls: list[list[str]] = []
        # one broker, coordinating every group; no record to fetch: every first-unconsumed-record read finds nothing
        cluster = SimpleNamespace(brokers=lambda: [SimpleNamespace(node_id=1)], get_coordinator=lambda *args: 1)
        self._manager = SimpleNamespace(run=lambda *args: None, cluster=cluster)

    def list_groups(self, broker_ids: list[int] | None = None) -> list[dict[str, str]]:
        return [{"group_id": g} for g in [*self.described, self.refused]]

    def describe_groups(self, ids: list[str]) -> dict[str, dict[str, object]]:
        return {g: self.described.get(g, {"error": "GroupAuthorizationFailedError"}) for g in ids}

    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, dict[object, object]]:
        self.offset_calls.append(sorted(specs))
        if self.refused in specs:
            raise GroupAuthorizationFailedError(f"OffsetFetchResponse failed for group '{self.refused}'.")
        return {g: {} for g in specs}

    def describe_topics(self, topics: list[str]) -> list[dict[str, object]]:
        partitions = [{"partition_index": p, "leader_id": 1} for p in (0, 1)]
        return [{"name": "orders", "error_code": 0, "partitions": partitions}]

    def list_partition_offsets(
        self, specs: dict[TopicPartition, object], isolation_level: object = None
    ) -> dict[TopicPartition, OffsetAndTimestamp]:
        """End offsets 10 and 20; log start offsets 3 and 6 (retention removed the first records)."""
        return {
            tp: OffsetAndTimestamp((3 if spec == OffsetSpec.EARLIEST else 10) * (tp.partition + 1), -1, 0)
            for tp, spec in specs.items()
        }

    def list_transactions(self, broker_ids: list[int] | None = None) -> dict[int, list[object]]:
        return {1: []}

    def describe_producers(self, partitions: list[TopicPartition]) -> dict[TopicPartition, object]:
        return {}

    def close(self) -> None:
        pass


def raw_group(state: str, protocol_type: str = "consumer") -> dict[str, object]:
    assignment = {"assigned_partitions": [{"topic": "orders", "partitions": [1, 0]}], "user_data": ""}
    member = {"member_id": "m1", "group_instance_id": None, "client_id": "c", "client_host": "/h",
              "member_assignment": assignment}  # fmt: skip
    return {"group_state": state, "protocol_type": protocol_type, "protocol_data": "range", "members": [member]}


def test_one_refused_group_becomes_an_issue_and_the_rest_is_collected() -> None:
    admin = ScriptedAdmin(
        {"a-stable": raw_group("Stable"), "b-rebalancing": raw_group("PreparingRebalance"),
         "c-connect": raw_group("Stable", "connect")},
        refused="d-secret",
    )  # fmt: skip

    class Factory:
        bootstrap_servers = "k1:9092"

        def __call__(self) -> ScriptedAdmin:
            return admin

    snap = GroupCollector("c1", Factory()).collect()
    groups = {g.group_id: g for g in snap.groups}
    assert sorted(groups) == ["a-stable", "b-rebalancing", "c-connect"]
    assert groups["a-stable"].members[0].assignment == (("orders", 0), ("orders", 1))
    assert groups["b-rebalancing"].members[0].assignment == ()  # only a Stable group holds an assignment
    assert groups["c-connect"].members[0].assignment == ()  # not the consumer protocol's bytes
    assert admin.offset_calls[0] == ["a-stable", "b-rebalancing", "c-connect", "d-secret"]  # one batched call first
    assert [(i.group_id, i.kind) for i in snap.issues] == [("d-secret", "describe"), ("d-secret", "offsets")]
    assert "GroupAuthorizationFailedError" in snap.issues[1].problem
    assert [(o.group_id, o.partition, o.no_commit, o.end_offset) for o in snap.offsets] == [
        ("a-stable", 0, True, 10),
        ("a-stable", 1, True, 20),
    ]


class LoadingCoordinator(ScriptedAdmin):
    """A coordinator still loading its group metadata (just restarted) for the first `loading` calls:
    the sandbox shows it only by chance, right after __consumer_offsets is created."""

    def __init__(self, loading: int) -> None:
        super().__init__({"a-stable": raw_group("Stable")}, refused="d-secret")
        self.loading = loading

    def list_groups(self, broker_ids: list[int] | None = None) -> list[dict[str, str]]:
        if self.loading:
            self.loading -= 1
            raise CoordinatorLoadInProgressError("ListGroupsRequest failed")
        return [{"group_id": "a-stable"}]


def collect_from(admin: ScriptedAdmin) -> GroupSnapshot:
    class Factory:
        bootstrap_servers = "k1:9092"

        def __call__(self) -> ScriptedAdmin:
            return admin

    return GroupCollector("c1", Factory()).collect()


def test_a_loading_coordinator_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groups_collector, "RETRY_BACKOFF_S", 0.0)
    snap = collect_from(LoadingCoordinator(loading=2))
    assert [g.group_id for g in snap.groups] == ["a-stable"] and snap.issues == ()


def test_a_coordinator_that_never_loads_fails_the_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groups_collector, "RETRY_BACKOFF_S", 0.0)
    with pytest.raises(CollectionFailed, match="cannot list the consumer groups of Kafka at k1:9092"):
        collect_from(LoadingCoordinator(loading=groups_collector.RETRIES))


def test_a_rows_position_is_its_commit_or_an_exact_share_start_offset() -> None:
    def row(committed: int | None, start: int | None, lag: int | None, end: int | None = 15) -> GroupOffset:
        return GroupOffset("g", "t", 0, committed, None, end, lag, start_offset=start)

    assert row(7, None, 8).position == 7
    # a share group: the start offset is the oldest unacknowledged record only when all above it are
    assert row(None, 10, 5).position == 10
    assert row(None, 0, 5).position is None  # the start offset trails acknowledgements
    assert row(None, 0, None).position is None and row(None, None, 5).position is None


def test_log_start_offsets_are_read_beside_the_end_offsets_and_published() -> None:
    snap = collect_from(ScriptedAdmin({"a-stable": raw_group("Stable")}, refused="d-secret"))
    assert snap.end_offsets == {("orders", 0): 10, ("orders", 1): 20}
    assert snap.start_offsets == {("orders", 0): 3, ("orders", 1): 6}
    ends = group_batch(snap).tables["partition_end_offsets"]
    assert ends.select(["partition", "end_offset", "log_start_offset"]).to_pylist() == [
        {"partition": 0, "end_offset": 10, "log_start_offset": 3},
        {"partition": 1, "end_offset": 20, "log_start_offset": 6},
    ]


class RefusesEarliest(ScriptedAdmin):
    """A leader whose log dir fails between the latest and the earliest ListOffsets: the sandbox cannot
    fail a disk on cue."""

    def list_partition_offsets(
        self, specs: dict[TopicPartition, object], isolation_level: object = None
    ) -> dict[TopicPartition, OffsetAndTimestamp]:
        if OffsetSpec.EARLIEST in specs.values():
            raise KafkaStorageError("ListOffsetsRequest failed for orders-0: KafkaStorageError")
        return super().list_partition_offsets(specs, isolation_level)


def test_a_refused_log_start_offset_is_an_issue_and_the_lag_stands() -> None:
    snap = collect_from(RefusesEarliest({"a-stable": raw_group("Stable")}, refused="d-secret"))
    assert snap.start_offsets == {} and snap.end_offsets == {("orders", 0): 10, ("orders", 1): 20}
    issues = [i for i in snap.issues if i.kind == "start_offsets"]
    assert [i.problem for i in issues] == [
        "leader 1 gave no log start offset for its 2 partitions this time (KafkaStorageError: [Error 56] "
        "KafkaStorageError: ListOffsetsRequest failed for orders-0: KafkaStorageError)"
    ]
    ends = group_batch(snap).tables["partition_end_offsets"]
    assert ends.column("log_start_offset").to_pylist() == [None, None]
    assert [(o.partition, o.end_offset) for o in snap.offsets] == [(0, 10), (1, 20)]
