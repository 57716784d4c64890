from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from kafka_ops.detectors.lag_time import DETECTOR, detect_groups
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.group_frames import (
    END_OFFSETS,
    OFFSETS,
    Row,
    context,
    end_offset,
    expect,
    frame,
    minutes_ago,
    offset,
)

TREND_COLUMNS = ("lag_velocity", "velocity_points", "lag_trend", "time_to_close_seconds")

# end offsets of t/0, 30, 20, 10 and 0 minutes ago: 100, 100 and 50 messages a minute
STEADY = [end_offset("t", 0, end, minutes) for minutes, end in ((30, 1000), (20, 2000), (10, 4000), (0, 5000))]


def detect(
    spark: SparkSession, offsets: list[Row], ends: list[Row], thresholds: Thresholds | None = None
) -> tuple[DataFrame, DataFrame]:
    inputs = {"group_offsets": frame(spark, OFFSETS, offsets), "partition_end_offsets": frame(spark, END_OFFSETS, ends)}
    found = DETECTOR.detect(inputs, context(thresholds))
    return found["lag_time_partitions"], found["lag_time_groups"]


def seconds(spark: SparkSession, offsets: list[Row], ends: list[Row]) -> DataFrame:
    partitions, _ = detect(spark, offsets, ends)
    return partitions.select("group_id", "lag_seconds", "method", "points", "severity")


def test_interpolation_between_two_points(spark: SparkSession) -> None:
    offsets = [offset("mid", "t", 0, 3000, 5000), offset("left", "t", 0, 2000, 5000)]
    partitions, _ = detect(spark, offsets, STEADY)
    expect(spark, partitions.drop(*TREND_COLUMNS), [
        # 3000 lies between 2000 (20 min ago) and 4000 (10 min ago): written 15 minutes ago
        ("m0", "mid", "t", 0, 3000, 5000, 2000, 900.0, "interpolated", 4, "warning"),
        # 2000 is the right end of one pair and the left end of the newer one: the newer wins
        ("m0", "left", "t", 0, 2000, 5000, 3000, 1200.0, "interpolated", 4, "warning"),
    ])  # fmt: skip


def test_extrapolation_below_the_oldest_point(spark: SparkSession) -> None:
    # oldest (1000, 30 min ago) to newest (5000, now): 4000 messages in 1800 s; 500 is 4500 back
    found = seconds(spark, [offset("g", "t", 0, 500, 5000)], STEADY)
    expect(spark, found, [("g", 2025.0, "extrapolated", 4, "critical")])


def test_caught_up(spark: SparkSession) -> None:
    offsets = [offset("at", "t", 0, 5000, 5000), offset("above", "t", 0, 5100, 5000)]
    expect(spark, seconds(spark, offsets, STEADY), [
        ("at", 0.0, "caught_up", 4, "ok"),
        ("above", 0.0, "caught_up", 4, "ok"),
    ])  # fmt: skip


def test_too_few_points_and_no_commit(spark: SparkSession) -> None:
    offsets = [
        offset("one", "u", 0, 50, 100),  # one point
        offset("none", "v", 0, 50, None),  # no end offset ever read
        offset("fresh", "u", 0, 100, 100),  # one point, but caught up with it
        offset("never", "t", 0, None, 5000),  # assigned, never committed
    ]
    ends = [*STEADY, end_offset("u", 0, 100)]
    expect(spark, seconds(spark, offsets, ends), [
        ("one", None, "too_few_points", 1, "info"),
        ("none", None, "too_few_points", 0, "info"),
        ("fresh", 0.0, "caught_up", 1, "ok"),
        ("never", None, "no_commit", 4, "info"),
    ])  # fmt: skip


def test_flat_line(spark: SparkSession) -> None:
    # the end offset stays at 200 from 30 to 10 minutes ago: the table keeps 200 at 30 and at 10
    # minutes ago (the middle point goes), so 4 points
    ends = [end_offset("f", 0, end, minutes) for minutes, end in ((40, 100), (30, 200), (20, 200), (10, 200), (0, 300))]
    offsets = [offset("on", "f", 0, 200, 300), offset("before", "f", 0, 150, 300)]
    expect(spark, seconds(spark, offsets, ends), [
        # 200 sits on the flat stretch: its right-hand end (10 minutes ago) and the point after
        # it give 300 - (300-200)·600/100 s = 10 minutes ago
        ("on", 600.0, "interpolated", 4, "warning"),
        # 150: halfway between 100 (40 min ago) and 200 (30 min ago)
        ("before", 2100.0, "interpolated", 4, "critical"),
    ])  # fmt: skip


def test_only_flat_table_has_no_slope(spark: SparkSession) -> None:
    # every point at 500: KLE divides by zero (infinite lag); here a lower bound: the producer has
    # been idle for the whole table (20 minutes), so offset 400 is at least that old
    ends = [end_offset("q", 0, 500, minutes) for minutes in (20, 10, 0)]
    offsets = [offset("below", "q", 0, 400, 500), offset("at", "q", 0, 500, 500)]
    expect(spark, seconds(spark, offsets, ends), [
        ("below", 1200.0, "lower_bound", 2, "warning"),
        ("at", 0.0, "caught_up", 2, "ok"),
    ])  # fmt: skip


def test_out_of_order_and_non_monotonic_points_are_skipped(spark: SparkSession) -> None:
    # 25 min ago the end offset fell to 10 (topic recreated): ignored, as is a second collection
    # captured at the same time as the one 20 minutes ago ("m20" sorts before "z")
    ends = [
        end_offset("t", 0, 1000, 30), end_offset("t", 0, 10, 25), end_offset("t", 0, 2000, 20),
        ("z", end_offset("t", 0, 3000, 20)[1], "t", 0, 3000), end_offset("t", 0, 4000, 10), end_offset("t", 0, 5000, 0),
    ]  # fmt: skip
    expect(spark, seconds(spark, [offset("g", "t", 0, 3000, 5000)], ends), [("g", 900.0, "interpolated", 4, "warning")])


def test_only_the_newest_points_are_used(spark: SparkSession) -> None:
    # 62 collections a minute apart: 0 and 10 at 61 and 60 minutes ago, then 1000 + 100 a minute
    ends = [end_offset("t", 0, 0, 61), end_offset("t", 0, 10, 60)]
    ends += [end_offset("t", 0, 1000 + (59 - m) * 100, m) for m in range(60)]
    # with the newest 60 points, 500 is below the table: extrapolated from 1000 (59 min ago) and
    # 6900 (now): 6400 messages back at 5900 per 3540 s. (The two oldest would interpolate it.)
    expect(
        spark, seconds(spark, [offset("g", "t", 0, 500, 6900)], ends), [("g", 3840.0, "extrapolated", 60, "critical")]
    )
    partitions, _ = detect(spark, [offset("g", "t", 0, 500, 6900)], ends, Thresholds(lag_time_points=62))
    expect(spark, partitions.select("method", "points"), [("interpolated", 62)])


def test_severity_thresholds(spark: SparkSession) -> None:
    thresholds = Thresholds(lag_seconds_warning=900, lag_seconds_critical=2000)
    offsets = [
        offset("mid", "t", 0, 3000, 5000),
        offset("old", "t", 0, 2000, 5000),
        offset("ancient", "t", 0, 500, 5000),
    ]
    partitions, _ = detect(spark, offsets, STEADY, thresholds)
    expect(
        spark, partitions.select("group_id", "severity"), [("mid", "ok"), ("old", "warning"), ("ancient", "critical")]
    )


def test_groups(spark: SparkSession) -> None:
    offsets = [
        offset("g", "t", 0, 3000, 5000),  # 900 s
        offset("g", "u", 0, 50, 100),  # too few points
        offset("g", "u", 1, 70, 100),  # too few points
        offset("h", "t", 0, 5000, 5000),  # caught up
        offset("x", "u", 0, 80, 100),  # too few points only
    ]
    _, groups = detect(spark, offsets, [*STEADY, end_offset("u", 0, 100)])
    expect(spark, groups.drop("lag_velocity", "lag_trend", "time_to_close_seconds"), [
        ("m0", "g", 900.0, "t", 0, "interpolated", False, 2080, 3, 2, "warning"),
        ("m0", "h", 0.0, "t", 0, "caught_up", False, 0, 1, 0, "ok"),
        ("m0", "x", None, None, None, None, None, 20, 1, 1, "info"),
    ])  # fmt: skip


def test_groups_say_how_their_largest_figure_was_obtained(spark: SparkSession) -> None:
    # the largest figure of each group decides its method: an extrapolation, a lower bound on an
    # idle topic, an interpolation beating a caught-up partition
    ends = [*STEADY, *(end_offset("q", 0, 500, minutes) for minutes in (20, 10, 0))]
    offsets = [
        offset("far", "t", 0, 500, 5000),  # extrapolated, 2025 s
        offset("far", "t", 1, None, 10),  # never committed
        offset("idle", "q", 0, 400, 500),  # at least 1200 s
        offset("mixed", "t", 0, 2000, 5000),  # interpolated, 1200 s
        offset("mixed", "q", 0, 500, 500),  # caught up
    ]
    _, groups = detect(spark, offsets, ends)
    expect(spark, groups.select("group_id", "max_lag_seconds", "max_lag_method", "max_is_lower_bound"), [
        ("far", 2025.0, "extrapolated", False),
        ("idle", 1200.0, "lower_bound", True),
        ("mixed", 1200.0, "interpolated", False),
    ])  # fmt: skip


def test_empty_input(spark: SparkSession) -> None:
    partitions, groups = detect(spark, [], [])
    assert partitions.count() == 0 and groups.count() == 0
    for found in (partitions, groups):
        assert {"snapshot_id", "severity"} <= set(found.columns)
        assert not {"cluster", "dt"} & set(found.columns)


def test_exact_from_the_first_unconsumed_record(spark: SparkSession) -> None:
    """A read record time beats the table: now - its timestamp; caught-up and unread rows keep theirs."""
    rows = [
        offset("read", "t", 0, 3000, 5000, record_time=minutes_ago(40)),  # the table would say 15 minutes
        offset("skewed", "t", 0, 3000, 5000, record_time=minutes_ago(-1)),  # a producer clock ahead: 0, not negative
        offset("unread", "t", 0, 3000, 5000),
        offset("at", "t", 0, 5000, 5000),
    ]
    inputs = {"group_offsets": frame(spark, OFFSETS, rows), "partition_end_offsets": frame(spark, END_OFFSETS, STEADY)}
    partitions = DETECTOR.detect(inputs, context())["lag_time_partitions"]
    expect(spark, partitions.select("group_id", "lag_seconds", "method", "severity"), [
        ("read", 2400.0, "exact", "critical"),
        ("skewed", 0.0, "exact", "ok"),
        ("unread", 900.0, "interpolated", "warning"),
        ("at", 0.0, "caught_up", "ok"),
    ])  # fmt: skip
    groups = {
        r["group_id"]: (r["max_lag_seconds"], r["max_lag_method"])
        for r in detect_groups(partitions, context()).collect()
    }
    assert groups["read"] == (2400.0, "exact")


def test_a_share_group_is_timed_from_its_start_offset(spark: SparkSession) -> None:
    # a share group commits nothing: its oldest unacknowledged record (the start offset) is timed
    share = ("m0", minutes_ago(0), "queue", "t", 0, None, 5000, 2000, False, False, False)
    done = ("m0", minutes_ago(0), "done", "t", 0, None, 5000, 0, False, False, False)
    offsets = frame(spark, OFFSETS, [(*share, 3000, None), (*done, 4000, None)])
    found = DETECTOR.detect({"group_offsets": offsets, "partition_end_offsets": frame(spark, END_OFFSETS, STEADY)},
                            context())["lag_time_partitions"]  # fmt: skip
    expect(spark, found.select("group_id", "committed_offset", "lag_seconds", "method"), [
        ("queue", 3000, 900.0, "interpolated"),  # written 15 minutes ago, as a commit at 3000 would be
        ("done", 4000, 0.0, "caught_up"),  # the broker's lag 0: everything acknowledged
    ])  # fmt: skip


def lags(group: str, *history: tuple[float, int], end: int = 5000) -> list[Row]:
    """`group`'s samples of t/0: (minutes ago, lag) each, committed at `end` - lag."""
    return [offset(group, "t", 0, end - lag, end, minutes) for minutes, lag in history]


def test_lag_velocity_and_time_to_close_over_burrows_window(spark: SparkSession) -> None:
    offsets = [
        *lags("closing", (20, 1000), (15, 800), (10, 600), (5, 400), (0, 200)),  # -200 per 5 min
        *lags("growing", (10, 100), (5, 200), (0, 300)),
        *lags("steady", (5, 500), (0, 500)),
        *lags("one", (0, 50)),
        *lags("caught", (5, 300), (0, 0)),
        offset("never", "t", 0, None, 5000),  # assigned, never committed: no lag, not caught up
    ]
    partitions, groups = detect(spark, offsets, STEADY)
    trends = partitions.select("group_id", "lag_velocity", "velocity_points", "lag_trend", "time_to_close_seconds")
    expect(spark, trends, [
        ("closing", -200 / 300, 5, "closing", 300.0),  # 200 left at 2/3 a second: 5 minutes
        ("growing", 100 / 300, 3, "growing", None),
        ("steady", 0.0, 2, "steady", None),
        ("one", None, 1, "unknown", None),
        ("caught", -1.0, 2, "caught_up", 0.0),
        ("never", None, 0, "unknown", None),
    ])  # fmt: skip
    rolled = groups.select("group_id", "lag_velocity", "lag_trend", "time_to_close_seconds")
    expect(spark, rolled.where("group_id = 'closing'"), [("closing", -200 / 300, "closing", 300.0)])


def test_only_the_last_lag_window_samples_make_the_slope(spark: SparkSession) -> None:
    """A lag that rose, then falls over the last two samples: closing in a window of two, growing over all."""
    offsets = lags("g", (15, 0), (10, 1000), (5, 900), (0, 800))
    for window, trend, closes in ((2, "closing", 2400.0), (10, "growing", None)):
        partitions, _ = detect(spark, offsets, STEADY, Thresholds(lag_window=window))
        found = partitions.select("lag_trend", "time_to_close_seconds", "velocity_points")
        expect(spark, found, [(trend, closes, min(window, 4))])


def test_a_group_closes_when_its_last_partition_does_and_grows_if_one_grows(spark: SparkSession) -> None:
    offsets = [
        offset("both", "t", 0, 4000, 5000, 5), offset("both", "t", 0, 4500, 5000),  # 500 in 300 s
        offset("both", "u", 0, 4700, 5000, 5), offset("both", "u", 0, 4900, 5000),  # 200 in 300 s
        offset("mixed", "t", 0, 4000, 5000, 5), offset("mixed", "t", 0, 4500, 5000),
        offset("mixed", "u", 0, 4900, 5000, 5), offset("mixed", "u", 0, 4800, 5000),  # grows
    ]  # fmt: skip
    _, groups = detect(spark, offsets, STEADY)
    expect(spark, groups.select("group_id", "lag_trend", "time_to_close_seconds"), [
        ("both", "closing", 300.0),  # t: 500 left at 5/3 a second (300 s), u: 100 at 2/3 (150 s)
        ("mixed", "growing", None),
    ])  # fmt: skip
