"""The health report shows a broker that failed the snapshot's end-to-end probe among its problems (paged
from the snapshot, it is no finding of the analysis), in the catalogue's words."""

from __future__ import annotations

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ProbeResult
from kafka_ops.problems.probe import REFUSING
from kafka_ops.report.data import gather
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import AT, small_snapshot


def probed(lake: Lake, error: str | None) -> None:
    snap = small_snapshot("s1")
    snap.probes = [ProbeResult("probe", 0, 1, 3.0, 7.0, None), ProbeResult("probe", 1, 2, None, None, error)]
    lake.publish(snapshot_batch(snap))


def test_a_broker_refusing_the_probe_is_a_problem_of_the_report(lake: Lake) -> None:
    probed(lake, "MessageSizeTooLargeError: [Error 10]")
    problems = [p for p in gather(lake, "c1", now=AT).problems.items if p.key == REFUSING]
    assert [(p.severity, p.title) for p in problems] == [("critical", "Broker 2 does not take writes")]


def test_a_probe_that_went_through_is_no_problem(lake: Lake) -> None:
    probed(lake, None)
    assert not [p for p in gather(lake, "c1", now=AT).problems.items if p.key == REFUSING]
