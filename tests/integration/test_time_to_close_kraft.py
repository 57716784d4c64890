"""A group catching up on the KRaft sandbox: a real Java consumer reading a backlog at a steady rate,
collected into a lake every two seconds; the lag_time detector's time to close, from the last collection
analysed, against the moment the lag actually reached zero (a collection every half second after it)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import GROUP_DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from sandbox import KRaftSandbox
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import FAST, collect, make_topics

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BACKLOG = 1_800
RATE = 40.0  # records per second: the backlog lasts about 45 s
SAMPLES = 6


def test_a_catching_up_groups_time_to_close_is_within_a_fifth_of_when_its_lag_reached_zero(
    healthy_kraft_sandbox: KRaftSandbox, spark: SparkSession, tmp_path: Path
) -> None:
    sandbox, run = healthy_kraft_sandbox, uuid.uuid4().hex[:6]
    name = f"ttc-{run}"
    make_topics(sandbox, {name: 1}, messages=BACKLOG)
    lake = open_lake(tmp_path / "lake")
    target = KafkaTarget(sandbox.bootstrap_servers, FAST)
    with JavaConsumer(sandbox.bootstrap_servers, name, [name], client_id=name, rate=RATE, log_dir=tmp_path) as c:
        c.wait_until(lambda c: c.committed.get((name, 0), 0) > 0, 60, "its first commit")
        for _ in range(SAMPLES):
            last, _ = groups_to_lake("sandbox", target, lake, include=name)
            time.sleep(2)
        (at_last,) = [o for o in last.offsets if o.group_id == name]
        assert at_last.lag is not None and at_last.lag > BACKLOG / 3, "the backlog ran out before the samples"
        deadline = time.monotonic() + 180
        while True:
            now = collect(sandbox, name)
            (offset,) = [o for o in now.offsets if o.group_id == name]
            if offset.lag == 0:
                reached = now.captured_at
                break
            assert time.monotonic() < deadline, f"lag still {offset.lag} after 3 min"
            time.sleep(0.5)

    analyse(spark, lake.root, "sandbox", [GROUP_DETECTORS["lag_time"]], Thresholds())
    (row,) = [r for r in lake.read("lag_time_partitions", "sandbox", [last.snapshot_id]).to_pylist()
              if r["group_id"] == name]  # fmt: skip
    actual = (reached - last.captured_at).total_seconds()
    assert row["lag_trend"] == "closing" and row["velocity_points"] == SAMPLES
    assert abs(row["time_to_close_seconds"] - actual) <= 0.2 * actual, (row, actual)
