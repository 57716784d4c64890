"""Snapshot integrity: each rule broken on purpose in a real lake, validated with Great Expectations,
recorded in `snapshot_validations`, and shown in the Data Docs page with its failing rows.

The first test pays for importing Great Expectations (~5-8 s on a busy 2-core machine); each
validation after that takes ~0.5 s, most of it rendering Data Docs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.errors import ConfigError, LakeError, SnapshotUntrusted
from kafka_ops.lake.schema import VALIDATION_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, TopicAssignment
from kafka_ops.model.groups import GroupIssue, GroupSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.validation.integrity import (
    IntegrityResult,
    IntegrityThresholds,
    is_trusted,
    require_trusted,
    validate_group_snapshot,
    validate_snapshot,
    validation_of,
)
from kafka_ops.validation.pipeline import recorded_verdict
from kafka_ops.validation.suites import SUITE_VERSION
from tests.unit.snapshots import AT, broker, group_snapshot, small_snapshot, stat, state
from tests.unit.validation.docs import table_rows

LATER = AT + timedelta(minutes=5)


def publish(lake: Lake, snap: ClusterSnapshot) -> str:
    lake.publish(snapshot_batch(snap))
    return snap.snapshot_id


def pair_row(page: Path, values: tuple[str, str], keys: list[str]) -> bool:
    """A column-pair expectation's failing row: Data Docs show the pair as a tuple, in either order."""
    pairs = {f"('{values[0]}', '{values[1]}')", f"('{values[1]}', '{values[0]}')"}
    return any(r[0] in pairs and r[1] == "1" and r[2:] == keys for r in table_rows(page) if len(r) >= 2)


def page_of(result: IntegrityResult, suite: str = "zookeeper_snapshot_partitions") -> Path:
    return Path(result.pages[suite])


# -- a clean snapshot -------------------------------------------------------------------------------


def test_a_consistent_snapshot_is_trusted_even_with_a_broker_down(lake: Lake) -> None:
    """small_snapshot: broker 3 down (orders under-replicated, solo offline), a reassignment in flight
    with mixed replication factors: an unhealthy cluster, faithfully recorded."""
    sid = publish(lake, small_snapshot("s1"))
    result = validate_snapshot(lake, "c1", sid)
    assert result.trusted and result.failed == ()
    assert result.observed["unregistered_replica_brokers"] == {"3": 3}  # reported, not a failure
    assert result.observed["previous_snapshot_id"] is None
    assert is_trusted(lake, "c1", sid)
    require_trusted(lake, "c1", sid)
    row = validation_of(lake, "c1", sid)
    assert row is not None
    assert (row["source"], row["trusted"], row["failed"], row["suite_version"]) == (
        "snapshots",
        True,
        [],
        SUITE_VERSION,
    )
    assert row["data_docs"] == result.page and Path(row["data_docs"]).is_file()
    assert json.loads(row["details"])["failed"] == {}
    index = Path(result.data_docs or "")
    assert index == Path(lake.base) / "_validation" / "data_docs" / "c1" / "index.html" and index.is_file()
    assert result.summary()["trusted"] is True


# -- each ZooKeeper rule broken on purpose ----------------------------------------------------------


def isr_outside_replicas(snap: ClusterSnapshot) -> None:
    snap.partition_states[("orders", 1)] = state("orders", 1, 2, (2, 4))


def leader_outside_isr(snap: ClusterSnapshot) -> None:
    snap.partition_states[("orders", 1)] = state("orders", 1, 1, (2,))


def duplicate_replicas(snap: ClusterSnapshot) -> None:
    snap.topics["dup"] = TopicAssignment("dup", "id-dup", {0: (1, 1, 2)}, {}, {}, 0)
    snap.partition_states[("dup", 0)] = state("dup", 0, 1, (1, 2))


def mixed_replication_factor(snap: ClusterSnapshot) -> None:
    """orders without its reassignment: partition 1 has 2 replicas, 0 and 2 have 3."""
    t = snap.topics["orders"]
    snap.topics["orders"] = replace(t, adding_replicas={})
    snap.reassignment_requests = []


def unregistered_broker_in_sync(snap: ClusterSnapshot) -> None:
    """Broker 3 is not registered, yet counted in sync under live leader 1."""
    snap.partition_states[("orders", 0)] = state("orders", 0, 1, (1, 2, 3))


def negative_replica_id(snap: ClusterSnapshot) -> None:
    snap.topics["neg"] = TopicAssignment("neg", "id-neg", {0: (1, -1)}, {}, {}, 0)
    snap.partition_states[("neg", 0)] = state("neg", 0, 1, (1,))


CASES: list[tuple[Callable[[ClusterSnapshot], None], str, list[str]]] = [
    (isr_outside_replicas, "isr_subset_of_replicas",
     ["ISR [2, 4] has broker 4, which is not among the replicas [2, 1]", "1", "orders", "1"]),
    (leader_outside_isr, "leader_in_isr", ["leader 1 is not in the ISR [2]", "1", "orders", "1"]),
    (duplicate_replicas, "no_duplicate_replicas",
     ["replicas [1, 1, 2] name broker 1 more than once", "1", "dup", "0"]),
    (mixed_replication_factor, "one_replication_factor_per_topic",
     ["2 replicas, while 2 of the 3 partitions of orders have 3 (no reassignment in flight)", "1", "orders", "1"]),
    (unregistered_broker_in_sync, "replicas_registered_or_reported",
     ["broker 3 is not registered, yet in the ISR [1, 2, 3] under live leader 1; no earlier snapshot shows when "
      "broker 3 left: if it just died, the controller removes it from the ISR within seconds: wait for the next "
      "snapshot", "1", "orders", "0"]),
    (negative_replica_id, "replicas_registered_or_reported",
     ["replica id -1 is not a broker id (replicas [1, -1])", "1", "neg", "0"]),
]  # fmt: skip


@pytest.mark.parametrize(("corrupt", "expectation", "docs_row"), CASES, ids=[c[0].__name__ for c in CASES])
def test_each_partition_rule_fails_alone_and_names_its_rows(
    lake: Lake, corrupt: Callable[[ClusterSnapshot], None], expectation: str, docs_row: list[str]
) -> None:
    snap = small_snapshot("bad")
    corrupt(snap)
    publish(lake, snap)
    result = validate_snapshot(lake, "c1", "bad")
    assert not result.trusted
    assert result.failed == (expectation,)
    (failure,) = result.failures
    problem, _, topic, partition = docs_row
    assert failure.count == 1
    assert failure.rows == ({"topic": topic, "partition": int(partition), "problem": problem},)
    assert expectation in result.message() and f"{topic}-{partition}: {problem}" in result.message()
    # the lake remembers, and refuses to let anything act on it
    assert not is_trusted(lake, "c1", "bad")
    row = validation_of(lake, "c1", "bad")
    assert row is not None and row["failed"] == [expectation] and row["trusted"] is False
    assert json.loads(row["details"])["failed"][expectation]["rows"] == list(failure.rows)
    # an as-of run hands this verdict back as recorded, in the shape of the summary it was made from
    recorded = recorded_verdict("c1", row)
    assert recorded.pop("recorded_at") == row["validated_at"].isoformat()
    assert recorded == {k: v for k, v in result.summary().items() if k not in ("data_docs_index", "seconds")}
    with pytest.raises(SnapshotUntrusted, match=rf"snapshot bad of cluster c1 is untrusted: failed {expectation}"):
        require_trusted(lake, "c1", "bad")
    # the Data Docs page shows the failed expectation with its row (topic, partition)
    page = page_of(result)
    assert row["data_docs"] == str(page)
    assert docs_row in table_rows(page)
    assert f"{expectation}:" in page.read_text(encoding="utf-8")


def test_mixed_replication_factor_is_allowed_while_the_topic_is_reassigned(lake: Lake) -> None:
    snap = small_snapshot("moving")  # orders-1 has 2 replicas, 0 and 2 have 3; orders-2 is moving
    assert {len(r) for r in snap.topics["orders"].partitions.values()} == {2, 3}
    publish(lake, snap)
    assert validate_snapshot(lake, "c1", "moving", data_docs=False).trusted


def test_controller_epoch_going_backwards_fails_against_the_previous_snapshot(lake: Lake) -> None:
    first = small_snapshot("s1")
    first.cluster_id = "kafka-id"
    publish(lake, first)
    second = small_snapshot("s2")
    second.captured_at, second.cluster_id, second.controller_epoch = LATER, "kafka-id", 3
    publish(lake, second)
    result = validate_snapshot(lake, "c1", "s2")
    assert result.failed == ("controller_epoch_never_decreases",)
    assert result.failures[0].rows == ({"snapshot_id": "s2", "controller_epoch": 3, "previous_controller_epoch": 4},)
    assert result.observed["previous_snapshot_id"] == "s1"
    page = page_of(result, "zookeeper_snapshot")
    assert result.page == str(page)  # the page to open first is the failing suite's
    assert pair_row(page, ("3", "4"), ["s2"])
    # named explicitly, and a first snapshot has nothing to compare with
    assert not validate_snapshot(lake, "c1", "s2", previous_snapshot_id="s1", data_docs=False).trusted
    assert validate_snapshot(lake, "c1", "s1", data_docs=False).trusted


def test_a_recreated_cluster_may_restart_its_controller_epoch(lake: Lake) -> None:
    first = small_snapshot("s1")
    first.cluster_id = "old-id"
    publish(lake, first)
    second = small_snapshot("s2")
    second.captured_at, second.cluster_id, second.controller_epoch = LATER, "new-id", 1
    publish(lake, second)
    result = validate_snapshot(lake, "c1", "s2", data_docs=False)
    assert result.trusted and result.observed["previous_controller_epoch"] is None


def test_too_many_collection_issues(lake: Lake) -> None:
    snap = small_snapshot("s1")
    snap.issues = [CollectionIssue("/brokers/topics/broken", "not JSON: b'{'")]
    publish(lake, snap)
    result = validate_snapshot(lake, "c1", "s1")
    assert result.failed == ("collection_issues_within_threshold",)
    assert result.failures[0].rows == ({"snapshot_id": "s1", "collection_issues": 1},)
    assert result.observed["collection_issue_examples"] == ["/brokers/topics/broken: not JSON: b'{'"]
    assert ["1", "1", "s1"] in table_rows(page_of(result, "zookeeper_snapshot"))
    tolerant = IntegrityThresholds(max_collection_issues=1)
    assert validate_snapshot(lake, "c1", "s1", thresholds=tolerant, data_docs=False).trusted
    assert is_trusted(lake, "c1", "s1")  # re-validating replaces the verdict


def test_load_issues_never_make_the_metadata_untrusted(lake: Lake) -> None:
    """A broker that could not describe its log dirs, or a failed dir, leaves the metadata whole: the
    snapshot stays trusted (a plan off a broker whose disk failed must not be refused), and says so."""
    snap = small_snapshot("s1")
    snap.issues = [
        CollectionIssue("DescribeLogDirs broker 2", "broker 2 did not describe its log dirs: timeout", "request"),
        CollectionIssue("DescribeLogDirs broker 1 log dir /d1", "error KAFKA_STORAGE_ERROR", "log_dir"),
        CollectionIssue("probe topic kafka-ops-probe", "missing, and writes are not enabled", "probe"),  # nor the probe
    ]
    publish(lake, snap)
    result = validate_snapshot(lake, "c1", "s1", data_docs=False)
    assert result.trusted and result.observed["collection_issues"] == 0
    assert result.observed["load_collection_issues"] == [f"{i.path}: {i.problem}" for i in snap.issues]


def test_strict_callers_get_an_error_naming_the_expectation_after_it_is_recorded(lake: Lake) -> None:
    snap = small_snapshot("bad")
    isr_outside_replicas(snap)
    publish(lake, snap)
    with pytest.raises(SnapshotUntrusted, match=r"failed isr_subset_of_replicas .*orders-1: ISR") as caught:
        validate_snapshot(lake, "c1", "bad", raise_on_failure=True, data_docs=False)
    assert caught.value.failed == ("isr_subset_of_replicas",)
    assert not is_trusted(lake, "c1", "bad")


def test_never_validated_is_not_trusted(lake: Lake) -> None:
    publish(lake, small_snapshot("s1"))
    assert not is_trusted(lake, "c1", "s1")
    with pytest.raises(SnapshotUntrusted, match=r"never validated .* run the integrity validation first"):
        require_trusted(lake, "c1", "s1")


def test_an_uncommitted_snapshot_cannot_be_validated(lake: Lake) -> None:
    with pytest.raises(LakeError, match="'nope' of cluster 'c1' is not committed in 'snapshots'"):
        validate_snapshot(lake, "c1", "nope")


def test_validations_are_their_own_commit_log(lake: Lake) -> None:
    publish(lake, small_snapshot("s1"))
    validate_snapshot(lake, "c1", "s1", data_docs=False)
    log = lake.commit_log(VALIDATION_COMMIT_TABLE, "c1")
    assert log.column("snapshot_id").to_pylist() == ["s1"]
    assert lake.batch_commit(VALIDATION_COMMIT_TABLE, "c1", "2026-11-21", "s1.validation") is not None  # its own batch
    assert lake.read(VALIDATION_COMMIT_TABLE, "c1", ["s1"]).num_rows == 1


# -- group collections ------------------------------------------------------------------------------


def clean_groups(snapshot_id: str = "g1") -> GroupSnapshot:
    """The test group collection without its collection issue (orders-1's commit above the end is
    flagged, as the collector flags it)."""
    return replace(group_snapshot(snapshot_id), issues=())


def test_a_consistent_group_collection_is_trusted(lake: Lake) -> None:
    snap = clean_groups()
    assert any(o.committed_above_end for o in snap.offsets)
    lake.publish(group_batch(snap))
    result = validate_group_snapshot(lake, "c1", "g1")
    assert result.trusted and result.source == "group_snapshots"
    assert result.observed["committed_above_end_flagged"] == 1
    assert is_trusted(lake, "c1", "g1")


def offsets_with(snap: GroupSnapshot, **changes: object) -> GroupSnapshot:
    """`snap` with orders-0's offset changed (committed 60, end 100 originally)."""
    offsets = tuple(
        replace(o, **changes) if (o.topic, o.partition) == ("orders", 0) else o  # type: ignore[arg-type]
        for o in snap.offsets
    )
    return replace(snap, offsets=offsets)


@pytest.mark.parametrize(
    ("changes", "expectation", "docs_row", "row"),
    [
        ({"committed_offset": -5, "lag": None}, "committed_offsets_not_negative",
         ["-5", "1", "stable", "orders", "0"],
         {"group_id": "stable", "topic": "orders", "partition": 0, "committed_offset": -5}),
        ({"committed_offset": 120, "lag": 0}, "committed_offsets_within_end",
         [("100", "120"), "1", "stable", "orders", "0"],
         {"group_id": "stable", "topic": "orders", "partition": 0, "end_offset_unless_flagged": 100,
          "committed_offset": 120}),
    ],
    ids=["negative", "above_end_unflagged"],
)  # fmt: skip
def test_bad_committed_offsets_make_the_collection_untrusted(
    lake: Lake, changes: dict[str, object], expectation: str, docs_row: list[object], row: dict[str, object]
) -> None:
    lake.publish(group_batch(offsets_with(clean_groups(), **changes)))
    result = validate_group_snapshot(lake, "c1", "g1")
    assert result.failed == (expectation,)
    assert result.failures[0].rows == (row,)
    page = page_of(result, "group_snapshot_offsets")
    value, _, *keys = docs_row
    if isinstance(value, tuple):
        assert pair_row(page, value, [str(k) for k in keys])
    else:
        assert docs_row in table_rows(page)
    with pytest.raises(SnapshotUntrusted, match=rf"snapshot g1 of cluster c1 is untrusted: failed {expectation}"):
        require_trusted(lake, "c1", "g1")


def test_a_commit_above_the_end_is_fine_when_flagged(lake: Lake) -> None:
    flagged = offsets_with(clean_groups(), committed_offset=120, lag=0, committed_above_end=True)
    lake.publish(group_batch(flagged))
    assert validate_group_snapshot(lake, "c1", "g1", data_docs=False).trusted


def test_too_many_group_collection_issues(lake: Lake) -> None:
    snap = replace(
        group_snapshot("g1"),
        issues=(GroupIssue("broken", "offsets", "GroupAuthorizationFailedError"), GroupIssue(None, "metadata", "x")),
    )
    lake.publish(group_batch(snap))
    result = validate_group_snapshot(lake, "c1", "g1")
    assert result.failed == ("group_collection_issues_within_threshold",)
    assert result.failures[0].rows == ({"snapshot_id": "g1", "collection_issues": 2},)
    assert ["2", "1", "g1"] in table_rows(page_of(result, "group_snapshot"))
    tolerant = IntegrityThresholds(max_group_collection_issues=2)
    assert validate_group_snapshot(lake, "c1", "g1", thresholds=tolerant, data_docs=False).trusted


def test_thresholds_refuse_unknown_keys_and_negative_counts() -> None:
    assert IntegrityThresholds.from_mapping({"max_collection_issues": 3}, "x").max_collection_issues == 3
    with pytest.raises(ConfigError, match="unknown integrity threshold"):
        IntegrityThresholds.from_mapping({"max_issues": 3}, "x")
    with pytest.raises(ConfigError, match="whole number ≥ 0"):
        IntegrityThresholds.from_mapping({"max_collection_issues": -1}, "x")


def test_data_docs_index_the_validations_and_forget_them_after_a_few_days(lake: Lake) -> None:
    publish(lake, small_snapshot("s1"))
    first = validate_snapshot(lake, "c1", "s1", validated_at=AT)
    later = small_snapshot("s2")
    later.captured_at = AT + timedelta(days=4)
    publish(lake, later)
    second = validate_snapshot(lake, "c1", "s2", validated_at=later.captured_at)
    index = Path(second.data_docs or "").read_text(encoding="utf-8")
    assert "validations/zookeeper_snapshot_partitions/s2/" in index
    assert not Path(first.pages["zookeeper_snapshot_partitions"]).exists()  # older than DocsSite.keep_days
    assert "validations/zookeeper_snapshot_partitions/s1/" not in index
    assert Path(second.pages["zookeeper_snapshot_partitions"]).is_file()


# -- a broker that just died: the controller has not shrunk its ISRs yet ---------------------------


def dying(snapshot_id: str, at_minutes: float, *, registered: bool, state_zxid: int = 10) -> ClusterSnapshot:
    """small_snapshot at AT + `at_minutes`, ZooKeeper position 100 × minutes + 100, with broker 3
    registered or not, and orders-0's state (last written at `state_zxid`) still counting 3 in sync."""
    snap = small_snapshot(snapshot_id)
    snap.captured_at = AT + timedelta(minutes=at_minutes)
    snap.zxid_start = snap.zxid_end = int(100 * at_minutes) + 100
    if registered:
        snap.brokers[3] = broker(3, "rack-c")
    snap.partition_states[("orders", 0)] = replace(state("orders", 0, 1, (1, 2, 3)), stat=stat(0, state_zxid))
    return snap


def test_the_isr_of_a_broker_that_just_left_is_kafkas_gap_not_a_stale_znode(lake: Lake) -> None:
    publish(lake, dying("alive", 0, registered=True))
    publish(lake, dying("gone", 0.1, registered=False))  # its state written (zxid 10) while 3 was registered
    result = validate_snapshot(lake, "c1", "gone")
    assert result.trusted, result.message()
    assert result.observed["departed_brokers_in_isr"]["3"]["last_seen"] == "alive"
    assert result.observed["departed_brokers_in_isr"]["3"]["transient"] is True


@pytest.mark.parametrize(
    ("history", "advice"),
    [
        # the state was rewritten after the broker was last seen registered (zxid 150 > 100): not the gap
        (
            [("alive", 0, True, 10), ("gone", 0.1, False, 150)],
            "its state was written after broker 3 was last seen registered (snapshot alive): a stale or "
            "hand-written state znode, not the controller's lag",
        ),
        # seen gone for 3 minutes and the controller has still not shrunk the ISR: not the gap any more
        (
            [("alive", 0, True, 10), ("gone", 1, False, 10), ("still", 4, False, 10)],
            "broker 3 has not been registered since 2026-11-21 06:01:00 UTC (180 s, longer than the 120 s the "
            "controller may take) and the controller has still not removed it from this ISR: check the controller "
            "(its log, controller_health); snapshots are trusted again once the ISR no longer names it",
        ),
    ],
    ids=["state-newer-than-last-sighting", "gone-longer-than-grace"],
)
def test_a_stale_isr_is_still_caught_and_the_refusal_says_what_to_wait_for(
    lake: Lake, history: list[tuple[str, float, bool, int]], advice: str
) -> None:
    for snapshot_id, minutes, registered, zxid in history:
        publish(lake, dying(snapshot_id, minutes, registered=registered, state_zxid=zxid))
    result = validate_snapshot(lake, "c1", history[-1][0])
    assert result.failed == ("replicas_registered_or_reported",)
    (failure,) = result.failures
    assert failure.rows == (
        {
            "topic": "orders",
            "partition": 0,
            "problem": f"broker 3 is not registered, yet in the ISR [1, 2, 3] under live leader 1; {advice}",
        },
    )
