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
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.analysis.thresholds import Thresholds
from kafka_ops.detectors.registry import GROUP_DETECTORS
from kafka_ops.groups_collector import KafkaTarget
from kafka_ops.lake.store import Lake
from kafka_ops.sandbox import SandboxCluster
from kafka_ops.sandbox.java_consumer import JavaConsumer
from kafka_ops.snapshotting import groups_to_lake
from tests.integration.java_groups import FAST, make_topics, produce

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BURST = 200  # messages per step
STEPS = 8
RATE = 40.0  # records/s of the slow consumers: they fall further behind every step
EXPECTED = {"ok": "OK", "slow": "WARN", "stopped": "STOP", "paused": "STALL", "rewound": "REWIND"}


def test_lag_statuses_lag_and_time_lag(healthy_sandbox: SandboxCluster, spark: SparkSession, tmp_path: Path) -> None:
    sandbox, run = healthy_sandbox, uuid.uuid4().hex[:6]
    topic = {role: f"lag-{run}-{role}" for role in EXPECTED}
    make_topics(sandbox, dict.fromkeys(topic.values(), 1))
    lake = Lake(tmp_path / "lake")
    target = KafkaTarget(sandbox.bootstrap_servers, FAST)
    produced = 0
    bursts: list[tuple[int, datetime]] = []  # (end offset after the step, collection time)
    with ExitStack() as stack:
        consumer = {
            role: stack.enter_context(
                JavaConsumer(
                    sandbox.bootstrap_servers, f"lag-{run}-{role}", [topic[role]], "range",
                    client_id=role, rate=0 if role == "ok" else RATE, log_dir=tmp_path,
                )
            )
            for role in EXPECTED
        }  # fmt: skip
        for c in consumer.values():
            c.wait_until(lambda c: bool(c.assignment), 60, "its partition")
        for step in range(1, STEPS + 1):
            produce(sandbox, {(t, 0): BURST for t in topic.values()})
            produced += BURST
            consumer["ok"].wait_committed({(topic["ok"], 0): produced})
            if step == 3:
                consumer["stopped"].close()  # leaves: the group is Empty from now on
                consumer["paused"].pause()  # stays in the group, holding its partition
            if step == 5:
                consumer["rewound"].seek(topic["rewound"], 0, 10)
                consumer["rewound"].wait_until(lambda c: c.committed[(topic["rewound"], 0)] < 100, 30, "rewind")
            if step == STEPS:  # freeze everyone so the last collection can be checked exactly
                for role in ("slow", "rewound"):
                    consumer[role].pause()
                time.sleep(2.5)  # a batch in progress finishes and commits
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

    result = analyse(spark, lake.root, "sandbox", list(GROUP_DETECTORS.values()), Thresholds())
    assert result.snapshot_id == snap.snapshot_id

    def rows(table: str) -> dict[str, dict[str, object]]:
        found = lake.read(table, "sandbox", [snap.snapshot_id]).to_pylist()
        return {
            str(r["group_id"])[len(f"lag-{run}-") :]: r for r in found if str(r["group_id"]).startswith(f"lag-{run}-")
        }

    partitions = rows("lag_status_partitions")
    assert {role: r["status"] for role, r in partitions.items()} == EXPECTED
    groups = rows("lag_status_groups")
    assert {role: r["status"] for role, r in groups.items()} == {
        "ok": "OK", "slow": "WARN", "stopped": "ERR", "paused": "ERR", "rewound": "ERR"
    }  # fmt: skip
    assert groups["stopped"]["state"] == "Empty" and groups["paused"]["state"] == "Stable"
    assert re.fullmatch(
        r"1 partition STOP: no new commit for \d+ s while lag grew to [\d,]+", str(groups["stopped"]["cause"])
    )

    # time lag: the committed offset was the end offset somewhere between two collections
    times = rows("lag_time_partitions")
    assert times["ok"]["method"] == "caught_up" and times["ok"]["lag_seconds"] == 0
    now = snap.captured_at
    for role in ("stopped", "paused", "slow"):
        c = committed[role]
        before = max((t for end, t in bursts if end <= c), default=bursts[0][1])
        after = min(t for end, t in bursts if end >= c)
        seconds = times[role]["lag_seconds"]
        assert isinstance(seconds, float)
        tolerance = 0.5
        assert (now - after).total_seconds() - tolerance <= seconds <= (now - before).total_seconds() + tolerance, role
