from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors import burrow_rules
from kafka_ops.detectors.lag_status import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.group_frames import (
    AT,
    COMMITS,
    GROUPS,
    MEMBERS,
    OFFSETS,
    QUOTAS,
    SNAPSHOTS,
    Row,
    as_dicts,
    as_utc,
    context,
    expect,
    frame,
    group,
    logged,
    member,
    minutes_ago,
    offset,
    quota,
)

Series = list[tuple[float, int, int]]
"""(minutes before now, committed offset, end offset) per collection."""

# lag 101, 50, 100, 150, 200: the offset stopped moving 30 minutes ago, the window spans 10; every
# end offset in the window is above the current commit (200), so Burrow #303's escape does not apply
STOPPED: Series = [(40, 100, 201), (30, 200, 250), (20, 200, 300), (10, 200, 350), (0, 200, 400)]


def history(group_id: str, topic: str, p: int, series: Series) -> list[Row]:
    return [offset(group_id, topic, p, committed, end, minutes) for minutes, committed, end in series]


def detect(
    spark: SparkSession, offsets: list[Row], groups: list[Row] | None = None, members: list[Row] | None = None,
    thresholds: Thresholds | None = None, quotas: list[Row] | None = None, commits: list[Row] | None = None,
) -> tuple[DataFrame, DataFrame]:  # fmt: skip
    snapshots = sorted({(q[0], q[1]) for q in quotas or []})
    inputs = {
        "group_offsets": frame(spark, OFFSETS, offsets),
        "group_commits": frame(spark, COMMITS, commits or []),
        "group_members": frame(spark, MEMBERS, members or []),
        "consumer_groups": frame(spark, GROUPS, groups or []),
        "quotas": frame(spark, QUOTAS, quotas or []),
        "snapshots": frame(spark, SNAPSHOTS, snapshots),
    }
    # cached: the rules' comparison and the test's own assertions read the same rows
    found = {name: frame.cache() for name, frame in DETECTOR.detect(inputs, context(thresholds)).items()}
    tables = {"group_offsets": (OFFSETS, offsets), "group_commits": (COMMITS, commits or []),
              "group_members": (MEMBERS, members or []), "consumer_groups": (GROUPS, groups or []),
              "quotas": (QUOTAS, newest_quotas(quotas or [], snapshots))}  # fmt: skip
    assert_burrow_rules_agree(found, {name: as_dicts(schema, rows) for name, (schema, rows) in tables.items()},
                              context(thresholds))  # fmt: skip
    return found["lag_status_partitions"], found["lag_status_groups"]


def newest_quotas(quotas: list[Row], snapshots: list[tuple[str, datetime]]) -> list[Row]:
    """The quotas rows of the newest ZooKeeper snapshot at or before the latest group collection."""
    before = [s for s in snapshots if s[1] <= AT]
    newest = max(before, key=lambda s: (s[1], s[0]), default=None)
    return [q for q in quotas if newest is not None and q[0] == newest[0]]


def assert_burrow_rules_agree(
    found: dict[str, DataFrame], tables: dict[str, list[dict[str, Any]]], now: Context
) -> None:
    """The paging path's rules (`burrow_rules`, plain rows) give exactly the Spark detector's rows."""
    partitions, groups = burrow_rules.lag_status(
        burrow_rules.Now(now.snapshot_id, now.captured_at, int(now.thresholds.lag_window), now.thresholds.lag_allowed),
        offsets=tables["group_offsets"], commits=tables["group_commits"], members=tables["group_members"],
        groups=tables["consumer_groups"], quotas=tables["quotas"],
    )  # fmt: skip
    for name, rows in (("lag_status_partitions", partitions), ("lag_status_groups", groups)):
        spark_rows = sorted((as_utc(r.asDict(recursive=True)) for r in found[name].collect()), key=repr)
        assert sorted(rows, key=repr) == spark_rows, name


def statuses(
    spark: SparkSession, series: Series, groups: list[Row] | None = None, members: list[Row] | None = None,
    thresholds: Thresholds | None = None,
) -> DataFrame:  # fmt: skip
    """Status, samples and complete of one partition ("g", "t", 0)."""
    partitions, _ = detect(spark, history("g", "t", 0, series), groups, members, thresholds)
    return partitions.select("status", "severity", "samples", "complete")


def test_stop_full_row(spark: SparkSession) -> None:
    # an Empty group that stopped committing: no member, STOP
    partitions, groups = detect(spark, history("g", "t", 0, STOPPED), [group("g", "Empty", "", 0)])
    expect(spark, partitions, [
        ("m0", "g", "t", 0, "STOP", 200, 400, 200, 101, 200, 5, 0.5, minutes_ago(30), None, "critical",
         minutes_ago(40), 100, 200, 50),
    ])  # fmt: skip
    expect(spark, groups, [
        ("m0", "g", "Empty", "ERR", 1, 200, "t", 0, 200, 0, 0, 1, 0, 0, 0.0, "critical",
         "1 partition STOP: no new commit for 30 min while lag grew to 200", None, None),
    ])  # fmt: skip


def test_stall_when_a_live_member_owns_the_stopped_partition(spark: SparkSession) -> None:
    stable = [group("g", "Stable", "range", 1)]
    owner = [member("g", "c-1", [("t", 0)])]
    partitions, groups = detect(spark, history("g", "t", 0, STOPPED), stable, owner)
    expect(spark, partitions.select("status", "owner", "severity"), [("STALL", "c-1", "critical")])
    expect(spark, groups.select("status", "stall_partitions", "cause"), [
        ("ERR", 1, "1 partition STALL: assigned to a live member but no new commit for 30 min while lag grew to 200"),
    ])  # fmt: skip


def test_assigned_in_a_group_that_is_not_stable_is_stop(spark: SparkSession) -> None:
    # the assignment is stale (a rebalance is under way): membership does not vouch for a live consumer
    rebalancing = [group("g", "PreparingRebalance", "range", 1)]
    owner = [member("g", "c-1", [("t", 0)])]
    partitions, _ = detect(spark, history("g", "t", 0, STOPPED), rebalancing, owner)
    expect(spark, partitions.select("status", "owner"), [("STOP", "c-1")])


def test_warn_lag_never_decreases(spark: SparkSession) -> None:
    # a new offset in every collection, lag 100, 110, 120
    found = statuses(spark, [(20, 100, 200), (10, 150, 260), (0, 200, 320)])
    expect(spark, found, [("WARN", "warning", 3, 0.3)])


def test_ok_when_lag_decreases_somewhere(spark: SparkSession) -> None:
    # lag 100, 120, 90
    found = statuses(spark, [(20, 100, 200), (10, 150, 270), (0, 250, 340)])
    expect(spark, found, [("OK", "ok", 3, 0.3)])


def test_rewind(spark: SparkSession) -> None:
    # the offset went back from 200 to 100 and moves on: lag 100, 250, 250
    found = statuses(spark, [(20, 200, 300), (10, 100, 350), (0, 150, 400)])
    expect(spark, found, [("REWIND", "critical", 3, 0.3)])


def test_rewind_group_cause(spark: SparkSession) -> None:
    offsets = history("g", "t", 0, [(20, 200, 300), (10, 100, 350), (0, 150, 400)])
    offsets += history("g", "t", 1, STOPPED)
    _, found = detect(spark, offsets, [group("g", "Empty", "", 0)])
    expect(spark, found.select("status", "stop_partitions", "rewind_partitions", "severity", "cause"), [
        ("ERR", 1, 1, "critical", "1 partition REWIND: the committed offset went backwards, lag up to 250"),
    ])  # fmt: skip


def test_a_rewind_that_recovered_is_not_rewind(spark: SparkSession) -> None:
    # back from 200 to 100, then on to 250 (>= 200): the rewind recovered; lag 100, 250, 150: OK
    found = statuses(spark, [(20, 200, 300), (10, 100, 350), (0, 250, 400)])
    expect(spark, found, [("OK", "ok", 3, 0.3)])


def test_recovering_to_exactly_the_earlier_offset_counts(spark: SparkSession) -> None:
    # back from 200 to 100, then to 200 again: recovered (>=); lag 100, 250, 250 never fell: WARN
    found = statuses(spark, [(20, 200, 300), (10, 100, 350), (0, 200, 450)])
    expect(spark, found, [("WARN", "warning", 3, 0.3)])


def test_only_the_first_rewind_is_examined(spark: SparkSession) -> None:
    # first rewind 300 -> 200 recovered (400); the later one (400 -> 350, never recovered) is not
    # examined, and the lag fell (320 -> 160): OK
    series: Series = [(30, 300, 500), (20, 200, 520), (10, 400, 560), (0, 350, 600)]
    expect(spark, statuses(spark, series), [("OK", "ok", 4, 0.4)])
    # the first rewind unrecovered: REWIND whatever comes after
    series = [(30, 300, 500), (20, 200, 520), (10, 250, 560), (0, 299, 600)]
    expect(spark, statuses(spark, series), [("REWIND", "critical", 4, 0.4)])


def test_any_sample_within_the_allowed_lag_is_ok(spark: SparkSession) -> None:
    # lag 30, 100, 170 never falls, but the first is within lag_allowed (30 <= 30): OK; at 29: WARN
    series: Series = [(20, 100, 130), (10, 150, 250), (0, 200, 370)]
    expect(spark, statuses(spark, series, thresholds=Thresholds(lag_allowed=30)), [("OK", "ok", 3, 0.3)])
    expect(spark, statuses(spark, series, thresholds=Thresholds(lag_allowed=29)), [("WARN", "warning", 3, 0.3)])


def test_equal_lags_warn(spark: SparkSession) -> None:
    # lag 100, 100, 100 on new commits: never strictly decreasing
    found = statuses(spark, [(20, 100, 200), (10, 150, 250), (0, 200, 300)])
    expect(spark, found, [("WARN", "warning", 3, 0.3)])


def test_stop_comes_before_rewind(spark: SparkSession) -> None:
    # went back to 100 thirty minutes ago and stayed there: it rewound, but it has stopped since
    found = statuses(spark, [(40, 200, 300), (30, 100, 300), (20, 100, 350), (10, 100, 400), (0, 100, 450)])
    expect(spark, found, [("STOP", "critical", 5, 0.5)])


def test_at_the_head_long_ago_does_not_hold_stop_back(spark: SparkSession) -> None:
    # Burrow #290: at the head (end 100) forty minutes ago, then 150 committed and nothing more while lag
    # grew: STOP, though the window holds a caught-up end offset, which is not recent (Burrow's ring of
    # broker offsets spans about 100 s)
    series: Series = [(40, 100, 100), (30, 150, 200), (20, 150, 250), (10, 150, 300), (0, 150, 350)]
    expect(spark, statuses(spark, series), [("STOP", "critical", 5, 0.5)])


def test_at_the_head_a_minute_ago_is_not_stop(spark: SparkSession) -> None:
    # Burrow #303: no new commit for longer than the window spans, but the end offset seen a minute ago
    # (100) is <= the current commit: the consumer was at the head recently, evaluation goes on (rule 4:
    # lag 0 seen)
    found = statuses(spark, [(30, 100, 100), (20, 100, 100), (10, 100, 100), (1, 100, 100), (0, 100, 120)])
    expect(spark, found, [("OK", "ok", 5, 0.5)])


def test_lag_zero_in_any_sample_is_ok(spark: SparkSession) -> None:
    # still committing, lag never falling, but it was caught up 30 minutes ago
    found = statuses(spark, [(30, 100, 100), (20, 150, 250), (10, 200, 350), (0, 250, 450)])
    expect(spark, found, [("OK", "ok", 4, 0.4)])


def test_allowed_lag(spark: SparkSession) -> None:
    assert statuses(spark, STOPPED).first()["status"] == "STOP"
    found = statuses(spark, STOPPED, thresholds=Thresholds(lag_allowed=200))
    expect(spark, found, [("OK", "ok", 5, 0.5)])
    found = statuses(spark, STOPPED, thresholds=Thresholds(lag_allowed=199))
    expect(spark, found, [("STOP", "critical", 5, 0.5)])


def test_fewer_than_two_samples_is_ok_and_incomplete(spark: SparkSession) -> None:
    # the older row carries no commit: no sample
    offsets = [offset("g", "t", 0, None, 300, 10), offset("g", "t", 0, 100, 400)]
    partitions, _ = detect(spark, offsets)
    expect(spark, partitions, [
        ("m0", "g", "t", 0, "OK", 100, 400, 300, 300, 300, 1, 0.1, AT, None, "ok", AT, 100, 100, 300),
    ])  # fmt: skip


def test_stall_when_every_commit_is_the_same_offset(spark: SparkSession) -> None:
    # Burrow's own STALL rule: two collections at the same capture time ("a" sorts before "m0"),
    # one offset; the window spans no time, so the STOP rule cannot fire
    offsets = [("a", AT, *offset("g", "t", 0, 100, 200)[2:]), offset("g", "t", 0, 100, 200)]
    partitions, _ = detect(spark, offsets)
    expect(spark, partitions.select("status", "samples", "last_commit_at"), [("STALL", 2, AT)])


def test_only_the_window_counts(spark: SparkSession) -> None:
    # caught up thirty minutes ago, then committing but falling behind: OK over 5 samples, WARN over 4
    series: Series = [(30, 100, 100), (20, 150, 250), (10, 200, 350), (5, 250, 450), (0, 300, 550)]
    expect(spark, statuses(spark, series, thresholds=Thresholds(lag_window=5)), [("OK", "ok", 5, 1.0)])
    expect(spark, statuses(spark, series, thresholds=Thresholds(lag_window=4)), [("WARN", "warning", 4, 1.0)])


def test_partitions_not_in_the_latest_collection_or_without_lag_are_not_reported(spark: SparkSession) -> None:
    offsets = [
        *history("g", "gone", 0, [(20, 100, 200), (10, 100, 300)]),  # no longer committed
        offset("g", "new", 0, None, 50),  # assigned, never committed
        offset("g", "t", 0, 100, 150, 10),
        offset("g", "t", 0, 100, None),  # end offset unknown now
    ]
    partitions, groups = detect(spark, offsets, [group("g", "Stable", "range", 1)])
    assert partitions.count() == 0
    expect(spark, groups, [
        ("m0", "g", "Stable", "OK", 0, 0, None, None, None, 0, 0, 0, 0, 0, None, "ok",
         "no committed partition with a known lag", None, None),
    ])  # fmt: skip


def test_group_roll_up(spark: SparkSession) -> None:
    offsets = [
        # g: OK (caught up), WARN (lag 100, 110, 120) and two STOP partitions: ERR
        *history("g", "a", 0, [(20, 100, 150), (10, 150, 150), (0, 200, 210)]),
        *history("g", "a", 1, [(20, 100, 200), (10, 150, 260), (0, 200, 320)]),
        *history("g", "b", 0, STOPPED),
        *history("g", "b", 1, [(40, 1000, 1201), (30, 1200, 1300), (20, 1200, 2000), (10, 1200, 3000),
                               (0, 1200, 5200)]),
        # w: a WARN partition, and a partition seen for the first time (complete 0.1)
        *history("w", "a", 0, [(20, 100, 200), (10, 150, 260), (0, 200, 320)]),
        offset("w", "a", 1, 10, 20),
    ]  # fmt: skip
    groups = [group("g", "Empty", "", 0), group("w", "Stable", "range", 1), group("idle", "Empty", "", 0)]
    _, found = detect(spark, offsets, groups)
    expect(spark, found, [
        ("m0", "g", "Empty", "ERR", 4, 4330, "b", 1, 4000, 1, 1, 2, 0, 0, 0.0, "critical",
         "2 partitions STOP: no new commit for 30 min while lag grew to 4,000", None, None),
        ("m0", "w", "Stable", "WARN", 2, 130, "a", 0, 120, 1, 1, 0, 0, 0, 0.0, "warning",
         "1 partition WARN: lag never decreased from one commit to the next, lag up to 120", None, None),
        ("m0", "idle", "Empty", "OK", 0, 0, None, None, None, 0, 0, 0, 0, 0, None, "ok",
         "no committed partition with a known lag", None, None),
    ])  # fmt: skip


def test_ok_group_cause(spark: SparkSession) -> None:
    offsets = history("g", "a", 0, [(10, 100, 150), (0, 150, 150)]) + history("g", "a", 1, [(0, 5, 1005)])
    _, found = detect(spark, offsets, [group("g")])
    expect(spark, found.select("status", "max_lag", "complete", "cause"), [
        ("OK", 1000, 0.0, "2 partitions OK: total lag 1,000"),
    ])  # fmt: skip


def test_group_complete_is_the_share_of_partitions_with_a_full_window(spark: SparkSession) -> None:
    # Burrow: complete = complete partitions / partitions; a window of 2 is full for a/0 only
    offsets = history("g", "a", 0, [(10, 100, 150), (0, 150, 150)]) + history("g", "a", 1, [(0, 5, 1005)])
    _, found = detect(spark, offsets, [group("g")], thresholds=Thresholds(lag_window=2))
    expect(spark, found.select("status", "complete"), [("OK", 0.5)])


def test_empty_input(spark: SparkSession) -> None:
    partitions, groups = detect(spark, [])
    assert partitions.count() == 0 and groups.count() == 0
    for found in (partitions, groups):
        assert {"snapshot_id", "severity"} <= set(found.columns)
        assert not {"cluster", "dt"} & set(found.columns)


# -- consumer quotas: a quota holding consumers back is named in the cause -----------------------------

GROWING: Series = [(40, 100, 200), (30, 150, 300), (20, 200, 400), (10, 250, 500), (0, 300, 600)]  # WARN


def quota_of(spark: SparkSession, quotas: list[Row], client: str = "app-1") -> tuple[object, ...]:
    members = [member("g", "m-1", [("t", 0)], client=client)]
    _, groups = detect(spark, history("g", "t", 0, GROWING), [group("g")], members, quotas=quotas)
    (row,) = groups.select("status", "consumer_quota_bytes_per_s", "consumer_quota_entity", "cause").collect()
    return tuple(row)


def test_the_quota_of_a_lagging_group_is_named_in_its_cause(spark: SparkSession) -> None:
    status, rate, entity, cause = quota_of(spark, [quota("clients/app-1", 1024)])
    assert (status, rate, entity) == ("WARN", 1024.0, "clients/app-1")
    assert cause.endswith("; a consumer quota of 1,024 B/s applies to its members (clients/app-1): "
                          "the quota may be what holds it back")  # fmt: skip


def test_kafka_quota_precedence_most_specific_entity_wins(spark: SparkSession) -> None:
    # clients/app-1 overrides clients/<default> even when it is higher; users/<default>/... beats clients/...
    assert quota_of(spark, [quota("clients/app-1", 5e6), quota("clients/<default>", 1000)])[1:3] == (
        5e6, "clients/app-1",
    )  # fmt: skip
    assert quota_of(spark, [quota("clients/<default>", 1000)], client="other")[1:3] == (1000.0, "clients/<default>")
    with_users = [
        quota("clients/app-1", 10),
        quota("users/<default>", 2000),
        quota("users/<default>/clients/app-1", 3000),
    ]
    assert quota_of(spark, with_users)[1:3] == (3000.0, "users/<default>/clients/app-1")
    # a user's own quota applies only to members authenticated as that user, unknown here; ips are not client quotas
    assert quota_of(spark, [quota("users/alice", 5), quota("ips/10.0.0.1", 5, "connection_creation_rate")])[1] is None


def test_only_the_latest_zookeeper_snapshot_counts(spark: SparkSession) -> None:
    # the quota was removed in the newer snapshot z2 (which still has another entity)
    removed = [quota("clients/app-1", 1024, snapshot="z1", minutes=5), quota("clients/x", 1, snapshot="z2")]
    status, rate, _, cause = quota_of(spark, removed)
    assert (status, rate) == ("WARN", None) and "quota" not in cause


def share_history(group_id: str, series: list[tuple[float, int, int]]) -> list[Row]:
    """A share group's rows: (minutes before now, end offset, the broker's lag), start offset 0, no commit."""
    return [
        (f"m{minutes:g}", minutes_ago(minutes), group_id, "t", 0, None, end, lag, False, False, False, 0, None)
        for minutes, end, lag in series
    ]


def test_a_share_group_is_rated_on_what_it_acknowledged(spark: SparkSession) -> None:
    # "q" acknowledged nothing for 30 minutes while records arrived; "done" acknowledges everything
    stuck = share_history("q", [(40, 201, 101), (30, 250, 50), (20, 300, 100), (10, 350, 150), (0, 400, 200)])
    done = share_history("done", [(40, 201, 0), (30, 250, 0), (20, 300, 0), (10, 350, 0), (0, 400, 0)])
    inputs = {
        "group_offsets": frame(spark, OFFSETS, stuck + done),
        "group_commits": frame(spark, COMMITS, []),
        "group_members": frame(spark, MEMBERS, []),
        "consumer_groups": frame(spark, GROUPS, [group("q", "Empty", "", 0), group("done", "Empty", "", 0)]),
        "quotas": frame(spark, QUOTAS, []),
        "snapshots": frame(spark, SNAPSHOTS, []),
    }
    partitions = DETECTOR.detect(inputs, context())["lag_status_partitions"]
    expect(spark, partitions.select("group_id", "status", "committed_offset", "lag"), [
        ("q", "STOP", 200, 200),  # its position (end - lag) has been 200 since 30 minutes ago
        ("done", "OK", 400, 0),
    ])  # fmt: skip


# -- windows from the commit log ----------------------------------------------------------------------
# a producer at 10 records/s: end offset 1000 at 60 s before now, collections every 20 s
COLLECTED_S = (60, 40, 20, 0)


def end_at(seconds: float) -> int:
    return int(1000 + 10 * (60 - seconds))


def collections(committed: dict[float, int]) -> list[Row]:
    """The group_offsets samples of ("g", "t", 0): the committed offset each collection saw."""
    return [offset("g", "t", 0, committed[s], end_at(s), s / 60) for s in COLLECTED_S]


def test_a_consumer_slower_than_its_producer_warns(spark: SparkSession) -> None:
    # commits every 5 s, 7 records/s against 10 produced: each commit's lag, at its own time, is 15 above
    # the one before (600 ... 735). The collections' samples alone (each commit's lag taken 0-20 s later,
    # with the producer's progress since) would see lag 700 -> 595 -> 690 -> 785 fall once and call it OK.
    times = [50 - 5 * k for k in range(10)]
    commits = [logged("g", "t", 0, 500 + 35 * k, t) for k, t in enumerate(times)]
    seen = {60: 465, 40: 605, 20: 745, 0: 815}
    partitions, groups = detect(spark, collections(seen), [group("g")], commits=commits)
    expect(spark, partitions.select("status", "samples", "complete", "lag_start", "lag", "last_commit_at"), [
        ("WARN", 10, 1.0, 600, end_at(0) - 815, AT - timedelta(seconds=5)),
    ])  # fmt: skip
    expect(spark, groups.select("status", "cause"), [
        ("WARN", f"1 partition WARN: lag never decreased from one commit to the next, lag up to {end_at(0) - 815:,}"),
    ])  # fmt: skip


def test_a_member_committing_the_same_offset_is_stall_and_one_committing_nothing_is_stop(
    spark: SparkSession,
) -> None:
    # the same offset committed every 5 s until now: STALL (no member needed to tell); commits that
    # ended 255 s ago after a 45 s window: STOP, although a live member holds the partition
    same = [logged("g", "t", 0, 500, 50 - 5 * k) for k in range(10)]
    partitions, _ = detect(spark, collections(dict.fromkeys(COLLECTED_S, 500)), [group("g")], commits=same)
    expect(spark, partitions.select("status", "samples"), [("STALL", 10)])
    gone = [logged("g", "t", 0, 400 + 10 * k, 300 - 5 * k) for k in range(10)]
    owner = [member("g", "c-1", [("t", 0)])]
    stable = [group("g", "Stable", "range", 1)]
    partitions, _ = detect(spark, collections(dict.fromkeys(COLLECTED_S, 490)), stable, owner, commits=gone)
    expect(
        spark, partitions.select("status", "owner", "last_commit_at"), [("STOP", "c-1", AT - timedelta(seconds=255))]
    )


def test_one_logged_commit_leaves_the_window_to_the_samples(spark: SparkSession) -> None:
    # a single commit in the log: the collections' samples decide (a new offset in each, lag 100, 110, 120)
    found, _ = detect(spark, history("g", "t", 0, [(20, 100, 200), (10, 150, 260), (0, 200, 320)]),
                      commits=[logged("g", "t", 0, 200, 30)])  # fmt: skip
    expect(spark, found.select("status", "samples"), [("WARN", 3)])


def test_a_commit_before_the_first_collection_has_an_unknown_lag_not_zero(spark: SparkSession) -> None:
    # commits every 5 s from 80 s ago, 7 records/s against 10 produced; the collections start 60 s ago:
    # the end offset at the first commits' times was never seen, so their lag is unknown (not 0, which
    # would read as "at the head" and rate a consumer falling behind OK)
    times = [80 - 5 * k for k in range(16)]
    commits = [logged("g", "t", 0, 300 + 35 * k, t) for k, t in enumerate(times)]
    seen = {60: 405, 40: 545, 20: 685, 0: 825}
    partitions, _ = detect(
        spark, collections(seen), [group("g")], commits=commits, thresholds=Thresholds(lag_window=16)
    )
    expect(spark, partitions.select("status", "samples", "lag_start"), [("WARN", 16, None)])


def test_commits_that_all_came_before_the_first_collection_show_no_trend(spark: SparkSession) -> None:
    # the commit log's history predates the only collection: no commit's lag is known, so "lag never
    # decreased" has nothing to stand on (OK), and the current lag is still reported
    commits = [logged("g", "t", 0, 300 + 35 * k, 24 - 5 * k) for k in range(5)]
    partitions, _ = detect(spark, [offset("g", "t", 0, 440, 900, 0)], [group("g")], commits=commits)
    expect(spark, partitions.select("status", "samples", "lag", "lag_start"), [("OK", 5, 460, None)])
