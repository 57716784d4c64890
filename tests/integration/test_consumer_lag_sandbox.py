"""Consumer lag end to end on the sandbox: real Java consumers staged to keep up, lag, stall,
stop and rewind; real collections into a lake; the Spark group detectors' findings."""

from __future__ import annotations

import re
import time
import uuid
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import pytest
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata, TopicPartition
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context
from kafka_ops.analysis.runner import analyse, read_history
from kafka_ops.detectors import lag_time
from kafka_ops.detectors.registry import GROUP_DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.report.digest import render_findings
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import FAST, make_topics, produce

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BURST = 200  # messages per step
STEPS = 8
TAKE = BURST // 4  # records the lagging consumers read (and commit at once) per step: they fall further
# behind every step, and after 3 steps they are still below the first collection's end offset
EXPECTED = {"ok": "OK", "slow": "WARN", "stopped": "STOP", "paused": "STOP", "stalled": "STALL", "rewound": "REWIND"}
"""Burrow's status of each role: a member that commits nothing (paused) is STOP as a departed one is; one
that commits the same offset again and again (stalled) is STALL."""
IDLE_COMMIT = 50  # the idle group's offset on a topic written once, before the first collection


def commit(sandbox: SandboxCluster, group: str, topic: str, offset: int) -> None:
    """Commit `offset` of `topic`-0 for `group` from an assign()ed consumer, then leave."""
    consumer = KafkaConsumer(bootstrap_servers=sandbox.bootstrap_servers, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(offset, "", -1)})
    finally:
        consumer.close()


def test_lag_statuses_lag_and_time_lag(healthy_sandbox: SandboxCluster, spark: SparkSession, tmp_path: Path) -> None:
    sandbox, run = healthy_sandbox, uuid.uuid4().hex[:6]
    topic = {role: f"lag-{run}-{role}" for role in EXPECTED}
    make_topics(sandbox, dict.fromkeys(topic.values(), 1))
    # a producer idle through the whole history: its group's time behind is only a lower bound
    idle = f"lag-{run}-idle"
    make_topics(sandbox, {idle: 1}, messages=BURST)
    commit(sandbox, idle, idle, IDLE_COMMIT)
    lake = open_lake(tmp_path / "lake")
    target = KafkaTarget(sandbox.bootstrap_servers, FAST)
    produced = 0
    bursts: list[tuple[int, datetime]] = []  # (end offset after the step, collection time)
    with ExitStack() as stack:
        consumer = {
            role: stack.enter_context(
                JavaConsumer(
                    sandbox.bootstrap_servers, f"lag-{run}-{role}", [topic[role]], "range",
                    client_id=role, log_dir=tmp_path,
                )
            )
            for role in EXPECTED
        }  # fmt: skip
        for c in consumer.values():
            c.wait_until(lambda c: bool(c.assignment), 60, "its partition")
        taking = {role: 0 for role in EXPECTED if role != "ok"}  # role: its offset after this step's take
        for role in taking:
            consumer[role].take(0)  # paused until told how much to read
        for step in range(1, STEPS + 1):
            produce(sandbox, {(t, 0): BURST for t in topic.values()})
            produced += BURST
            for role in taking:
                consumer[role].take(TAKE)
                taking[role] += TAKE
            consumer["ok"].wait_committed({(topic["ok"], 0): produced})
            for role, offset in taking.items():
                consumer[role].wait_committed({(topic[role], 0): offset})
            if step == 3:
                consumer["stopped"].close()  # leaves: the group is Empty from now on
                consumer["paused"].pause()  # stays in the group, holding its partition, committing nothing
                consumer["stalled"].stall()  # stays too, committing the same offset every second
                taking = {role: taking[role] for role in ("slow", "rewound")}
            if step == STEPS - 1:  # far below where it was, and it reads only TAKE a step: a rewind that
                # recovered is not REWIND
                consumer["rewound"].seek(topic["rewound"], 0, 10)
                consumer["rewound"].wait_until(lambda c: c.committed[(topic["rewound"], 0)] == 10, 30, "rewind")
                taking["rewound"] = 10
            snap, _ = groups_to_lake("sandbox", target, lake, include=f"lag-{run}-.*")
            bursts.append((produced, snap.captured_at))
            time.sleep(1.5)
        committed = {role: c.committed.get((topic[role], 0), 0) for role, c in consumer.items()}

    # lag is produced minus consumed, exactly
    last = {o.group_id: o for o in snap.offsets}
    for role in EXPECTED:
        row = last[f"lag-{run}-{role}"]
        assert (row.end_offset, row.committed_offset) == (produced, committed[role]), role
        assert row.lag == produced - committed[role], role

    # a window of the last 5 commits: the stopped and paused consumers' last commits (step 3) are below
    # every end offset collected, so Burrow #303's "at the head recently" escape does not hold back
    # STOP/STALL, and the rewind (in step 7) is inside it
    result = analyse(spark, lake.root, "sandbox", list(GROUP_DETECTORS.values()), Thresholds(lag_window=5))
    assert result.snapshot_id == snap.snapshot_id

    def rows(table: str) -> dict[str, dict[str, object]]:
        found = lake.read(table, "sandbox", [snap.snapshot_id]).to_pylist()
        return {
            str(r["group_id"])[len(f"lag-{run}-") :]: r for r in found if str(r["group_id"]).startswith(f"lag-{run}-")
        }

    partitions = rows("lag_status_partitions")
    assert {role: r["status"] for role, r in partitions.items() if role != "idle"} == EXPECTED
    groups = rows("lag_status_groups")
    assert {role: r["status"] for role, r in groups.items() if role != "idle"} == {
        "ok": "OK", "slow": "WARN", "stopped": "ERR", "paused": "ERR", "stalled": "ERR", "rewound": "ERR"
    }  # fmt: skip
    assert groups["stopped"]["state"] == "Empty" and groups["paused"]["state"] == groups["stalled"]["state"] == "Stable"
    # its window's first commit came before the first collection: the lag it started from is unknown,
    # so the cause states the lag, not that it grew
    stopped_lag = f"{produced - committed['stopped']:,}"
    assert re.fullmatch(
        rf"1 partition STOP: no new commit for \d+ s with lag at {stopped_lag}", str(groups["stopped"]["cause"])
    )
    assert partitions["stopped"]["lag_start"] is None and partitions["slow"]["lag_start"] > 0

    # time lag: the first unconsumed record (at the committed offset) was produced in the burst that
    # first moved the end offset past it, after the collection before that burst (if any)
    times = rows("lag_time_partitions")
    assert times["ok"]["method"] == "caught_up" and times["ok"]["lag_seconds"] == 0
    now = snap.captured_at
    for role in ("stopped", "paused", "stalled", "slow"):
        c = committed[role]
        before = max((t for end, t in bursts if end <= c), default=None)
        after = min(t for end, t in bursts if end > c)
        seconds = times[role]["lag_seconds"]
        assert isinstance(seconds, float)
        tolerance = 0.5
        assert (now - after).total_seconds() - tolerance <= seconds, role
        assert before is None or seconds <= (now - before).total_seconds() + tolerance, role

    # every lagging partition's figure is exact: the time of its first unconsumed record
    lagging = ("slow", "stopped", "paused", "stalled", "rewound", "idle")
    assert {role: times[role]["method"] for role in lagging} == dict.fromkeys(lagging, "exact")
    first_collection = bursts[0][1]
    idle_seconds = times["idle"]["lag_seconds"]
    assert isinstance(idle_seconds, float)
    assert idle_seconds >= (now - first_collection).total_seconds()  # its message is older still
    lag_groups = rows("lag_time_groups")
    assert {role: r["max_lag_method"] for role, r in lag_groups.items()} == {
        "ok": "caught_up", **dict.fromkeys(lagging, "exact")
    }  # fmt: skip

    # the fallback where no record time was read, on the same window: how each figure was obtained:
    # interpolated inside the history, extrapolated below its oldest point, a lower bound on the
    # idle topic, exact when caught up
    window = {t: read_history(spark, lake.root, t, "sandbox", since=bursts[0][1], until=now)
              for t in lag_time.DETECTOR.tables}  # fmt: skip
    window["group_offsets"] = window["group_offsets"].withColumn("record_timestamp", F.lit(None).cast("timestamp"))
    context = Context("sandbox", snap.snapshot_id, now, Thresholds())
    fallback = lag_time.DETECTOR.detect(window, context)["lag_time_partitions"].collect()
    estimated = {str(r["group_id"])[len(f"lag-{run}-") :]: r for r in fallback
                 if str(r["group_id"]).startswith(f"lag-{run}-")}  # fmt: skip
    oldest_end = bursts[0][0]
    methods = {role: "interpolated" if committed[role] >= oldest_end else "extrapolated"
               for role in ("slow", "stopped", "paused", "stalled", "rewound")}  # fmt: skip
    assert {role: estimated[role]["method"] for role in methods} == methods
    assert estimated["idle"]["method"] == "lower_bound"
    idle_bound = estimated["idle"]["lag_seconds"]
    assert isinstance(idle_bound, float)
    assert abs(idle_bound - (now - first_collection).total_seconds()) <= 0.5

    # the same group, its committed offset now below a 3-point history: extrapolated
    short = Context("sandbox", snap.snapshot_id, now, Thresholds(lag_time_points=3))
    found = lag_time.DETECTOR.detect(window, short)["lag_time_partitions"].collect()
    below = {str(r["group_id"])[len(f"lag-{run}-") :]: r["method"] for r in found
             if str(r["group_id"]).startswith(f"lag-{run}-")}  # fmt: skip
    assert committed["stopped"] < bursts[-3][0] and below["stopped"] == "extrapolated"
    assert below["ok"] == "caught_up" and below["idle"] == "lower_bound"

    # and `kafka-ops findings` says how each figure was obtained
    text = render_findings(lake, "sandbox")
    assert re.search(rf"group lag-{run}-idle: \d[\w ]*? \(exact\) behind on {idle}-0", text), text
    assert re.search(rf"group lag-{run}-slow: \d[\w ]*? \(exact\) behind on {topic['slow']}-0", text), text
