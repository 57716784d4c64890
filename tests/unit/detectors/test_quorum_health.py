from __future__ import annotations

from datetime import timedelta
from typing import Any

from pyspark.sql import SparkSession

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.quorum_health import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, SNAPSHOTS, frame

QUORUM = (
    "snapshot_id string, captured_at timestamp, replica_id int, role string, log_end_offset long, lag long, "
    "last_fetch_at timestamp, last_caught_up_at timestamp, is_leader boolean"
)
FENCED = "snapshot_id string, captured_at timestamp, broker_id int"


def replica(rid: int, role: str, lag: int = 0, fetched_s: float | None = 1, caught_up_s: float | None = 1,
            leader: bool = False) -> tuple[Any, ...]:  # fmt: skip
    def ago(s: float | None) -> Any:
        return None if s is None else AT - timedelta(seconds=s)

    return ("s3", AT, rid, role, 1000 - lag, lag, ago(fetched_s), ago(caught_up_s), leader)


def health(spark: SparkSession, quorum: list[tuple[Any, ...]], fenced: list[tuple[Any, ...]] = ()) -> dict[str, Any]:
    snapshots = [("s1", AT - timedelta(minutes=10)), ("s2", AT - timedelta(minutes=5)), ("s3", AT)]
    inputs = {
        "quorum": frame(spark, QUORUM, quorum),
        "fenced_brokers": frame(spark, FENCED, list(fenced)),
        "snapshots": frame(spark, SNAPSHOTS, snapshots),
    }
    (table,) = DETECTOR.detect(inputs, Context("c1", "s3", AT, Thresholds())).values()
    return {f"{r['kind']} {r['replica_id']}": r for r in (row.asDict() for row in table.collect())}


def test_a_healthy_quorum_is_all_ok(spark: SparkSession) -> None:
    found = health(spark, [replica(101, "voter", leader=True), replica(102, "voter"), replica(103, "voter"),
                           replica(1, "observer")])  # fmt: skip
    assert {k: (r["status"], r["severity"]) for k, r in found.items()} == {
        "voter 101": ("leader", "ok"), "voter 102": ("ok", "ok"), "voter 103": ("ok", "ok"), "observer 1": ("ok", "ok"),
    }  # fmt: skip
    assert all(r["problem"] is None for r in found.values())


def test_a_voter_not_fetching_and_a_lagging_broker(spark: SparkSession) -> None:
    found = health(spark, [
        replica(101, "voter", leader=True), replica(102, "voter"),
        replica(103, "voter", lag=40, fetched_s=95, caught_up_s=95),
        replica(1, "observer", lag=12, fetched_s=1, caught_up_s=45),
        replica(2, "observer", lag=3, fetched_s=1, caught_up_s=5),  # behind for 5 s only: catching up, not lagging
    ])  # fmt: skip
    down = found["voter 103"]
    assert (down["status"], down["severity"], down["seconds_since_fetch"]) == ("not_fetching", "warning", 95)
    assert "2 of 3 voters fetching, 2 needed for a majority" in down["problem"]
    assert down["action"].startswith("check controller 103")
    broker = found["observer 1"]
    assert (broker["status"], broker["severity"]) == ("lagging", "warning")
    assert broker["problem"] == (
        "broker 1 is 12 offsets behind the quorum leader and has not caught up for 45 s: "
        "it serves stale metadata (topics, leaders, ISRs)"
    )
    assert found["observer 2"]["status"] == "ok"


def test_two_voters_of_three_down_is_critical(spark: SparkSession) -> None:
    found = health(spark, [replica(101, "voter", leader=True), replica(102, "voter", fetched_s=None, caught_up_s=None),
                           replica(103, "voter", fetched_s=300)])  # fmt: skip
    assert {found[f"voter {v}"]["severity"] for v in (102, 103)} == {"critical"}
    assert found["voter 103"]["problem"] == (
        "controller 103 has not fetched the metadata log from the quorum leader for 300 s: "
        "a voter down or cut off (1 of 3 voters fetching, 2 needed for a majority)"
    )
    assert found["voter 102"]["problem"].startswith(
        "controller 102 has not fetched the metadata log since the quorum leader was elected: "
    )


def test_a_fenced_broker_since_its_run_began(spark: SparkSession) -> None:
    fenced = [("s1", AT - timedelta(minutes=10), 2), ("s2", AT - timedelta(minutes=5), 3), ("s3", AT, 3),
              ("s3", AT, 2)]  # fmt: skip
    found = health(spark, [replica(101, "voter", leader=True)], fenced)
    # broker 3: fenced in s2 and s3; broker 2: fenced in s1, not in s2 (it came back), fenced again in s3
    assert found["fenced_broker 3"]["fenced_since"].replace(tzinfo=AT.tzinfo) == AT - timedelta(minutes=5)
    assert found["fenced_broker 2"]["fenced_since"].replace(tzinfo=AT.tzinfo) == AT
    assert found["fenced_broker 2"]["severity"] == "warning"
    assert found["fenced_broker 2"]["problem"] == (
        "broker 2 is registered but fenced by the controller: it leads nothing and is out of every ISR"
    )


def test_a_zookeeper_snapshot_has_no_quorum_findings(spark: SparkSession) -> None:
    assert health(spark, []) == {}
