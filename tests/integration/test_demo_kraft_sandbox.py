"""`make demo`'s KRaft half, run whole at toy size (its own KRaft sandbox, both DAGs through
`airflow dags test`): what it prints and what it leaves in the lake, so the demo cannot silently rot."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.lake.store import Lake
from sandbox.demo.kraft import KRAFT_CLUSTER, STOPPED_BROKER, kraft_demo

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_demos_kraft_cluster_shows_a_fenced_broker_and_a_quorum_failover(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lake_root = str(tmp_path / "lake")
    kraft_demo(lake_root, messages=20)
    out = capsys.readouterr().out

    lake = Lake(lake_root)
    healthy, faulty = sorted(lake.snapshots(KRAFT_CLUSTER).to_pylist(), key=lambda r: r["captured_at"])
    assert (healthy["source"], faulty["source"]) == ("kraft", "kraft")
    assert (healthy["under_replicated_count"], healthy["offline_count"]) == (0, 0)
    sid = faulty["snapshot_id"]
    assert lake.read("fenced_brokers", KRAFT_CLUSTER, [sid]).column("broker_id").to_pylist() == [STOPPED_BROKER]
    assert faulty["offline_count"] == 1 and faulty["under_replicated_count"] >= 6

    # the analysis DAG's findings: the stopped broker's partitions, then the failover
    isr = {(r["topic"], r["partition"]): r for r in lake.read("isr_health", KRAFT_CLUSTER, [sid]).to_pylist()}
    assert isr[("kr_single", 2)]["status"] == "offline"
    assert all(isr[("kr_orders", p)]["isr"] == [b for b in isr[("kr_orders", p)]["replicas"] if b != STOPPED_BROKER]
               for p in range(6))  # fmt: skip
    assert {isr[("kr_orders", p)]["min_isr"] for p in range(6)} == {2}
    (change,) = lake.read("controller_changes", KRAFT_CLUSTER).to_pylist()
    killed, elected = change["from_controller"], change["to_controller"]
    assert {killed, elected} <= {101, 102, 103} and killed != elected
    quorum = {r["replica_id"]: r for r in lake.read("quorum_health", KRAFT_CLUSTER, [sid]).to_pylist()}
    assert (quorum[elected]["status"], quorum[killed]["status"]) == ("leader", "not_fetching")
    assert (tmp_path / "lake" / "_reports" / KRAFT_CLUSTER / "latest.html").is_file()

    # what the user reads: the KRaft cluster's own heading, its findings, its alerts and the dry-run plan
    assert f"== findings for the KRaft cluster {KRAFT_CLUSTER}" in out
    assert f"findings for cluster {KRAFT_CLUSTER}, snapshot {sid}" in out
    assert f"critical broker {STOPPED_BROKER} is down: 7 partitions under-replicated" in out
    assert f"warning  broker {STOPPED_BROKER} is registered but fenced by the controller" in out
    assert f": replication_factor on cluster {KRAFT_CLUSTER}" in out
    # the load-aware plan may also put the new replica first, to even leadership (elected once it is in sync)
    assert "kr_single-0: [1] -> [1, 2]" in out or "kr_single-0: [1] -> [2, 1]" in out
    assert "kr_single-2: partition is offline (no live leader)" in out
    assert out.rstrip().endswith("done: no KRaft controller or broker left running")
