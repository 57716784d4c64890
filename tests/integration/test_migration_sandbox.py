"""The ZooKeeper-to-KRaft migration, watched for real: a Kafka 3.9 ZooKeeper cluster with a KRaft
controller migrating it (`MigrationSandbox`), walked through every phase in order, one snapshot per
phase, the quorum checked against Kafka's own `kafka-metadata-quorum --bootstrap-controller`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.errors import NotZooKeeper
from kafka_ops.lake.open import open_lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.publish import collect_metadata, snapshot_to_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources import migration
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.migration import MigrationWatch, migration_status
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import run_gates
from kafka_ops.validation.integrity import validate_snapshot
from sandbox.migration import MigrationSandbox
from tests.integration.kafka_tools import quorum_status

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLUSTER = "migrating"
TOPIC = "orders"


@pytest.fixture(scope="module")
def cluster() -> Iterator[MigrationSandbox]:
    sandbox = MigrationSandbox().start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, 6, 3)])
        admin.close()
        sandbox.wait_healthy()
        yield sandbox
    finally:
        sandbox.stop()


def snapshot(cluster: MigrationSandbox, controllers: bool = True) -> ClusterSnapshot:
    where = MigrationWatch(
        cluster.controller_bootstrap if controllers and cluster.controller_ports else None,
        KafkaTarget(cluster.bootstrap_servers),
    )
    return collect_metadata(CLUSTER, ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot, timeout_s=5), where)


def test_the_migration_phase_by_phase(
    cluster: MigrationSandbox, tmp_path: object, monkeypatch: pytest.MonkeyPatch, spark: SparkSession
) -> None:
    lake = open_lake(str(tmp_path))
    # 1. ZooKeeper mode: nothing migrates, nothing is asked beyond ZooKeeper
    snap = snapshot(cluster)
    assert snap.migration is None and migration_status(snap) is None
    assert snap.quorum is None and snap.divergences is None

    # 2. controllers started in migration mode: they wait for every broker (none registered yet)
    cluster.start_controllers()
    cluster.wait_for(lambda s: s.migration is not None, 60, "/migration to be created")
    snap = snapshot(cluster)
    status = migration_status(snap)
    assert status is not None and status.phase == "pre_migration"
    assert snap.migration is not None and snap.migration.kraft_metadata_offset == -1
    assert status.waiting_brokers == (1, 2, 3) and status.kraft_brokers == ()
    assert snap.divergences is None  # nothing copied yet: no KRaft view to compare
    assert snap.quorum is not None and snap.quorum.leader_id == 101
    truth = quorum_status(cluster.controller_bootstrap, "--bootstrap-controller")
    assert int(truth["LeaderId"]) == snap.quorum.leader_id
    assert int(truth["LeaderEpoch"]) == snap.quorum.leader_epoch
    lake.publish(snapshot_batch(snap))

    # one broker restarted with the migration settings registers with the controller; two still waited for
    cluster.enable_migration_on_brokers([1])
    status = _wait_status(cluster, lambda st: st.waiting_brokers != (1, 2, 3))
    assert status.phase == "pre_migration" and status.waiting_brokers == (2, 3)

    # 3. every broker restarted: the controller copies the metadata and dual-writes
    cluster.enable_migration_on_brokers([2, 3])
    snap = snapshot(cluster)
    status = migration_status(snap)
    assert status is not None and status.phase == "dual_write", status
    assert snap.migration is not None and snap.migration.kraft_controller_id == 101
    assert snap.controller is not None and snap.controller.broker_id == 101  # the KRaft controller took /controller
    assert status.zookeeper_brokers == (1, 2, 3) and status.kraft_brokers == ()
    assert not status.zookeeper_writes_stopped and status.seconds_since_zookeeper_write < 10
    assert status.zookeeper_lag is not None and status.zookeeper_lag < 50  # ZooKeeper keeps up with the log
    assert snap.divergences == [], snap.divergences  # both views agree on all partitions
    assert {(TOPIC, p) for p in range(6)} <= set(snap.partition_states)

    # published, analysed and gated: in dual-write since its first snapshot, nothing stalled or diverging
    published, _ = snapshot_to_lake(
        CLUSTER,
        ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot, timeout_s=5),
        lake,
        MigrationWatch(cluster.controller_bootstrap, KafkaTarget(cluster.bootstrap_servers)),
    )
    rows = lake.read("migration", CLUSTER).to_pylist()
    assert [r["phase"] for r in sorted(rows, key=lambda r: r["captured_at"])] == ["pre_migration", "dual_write"]
    row = rows[-1] if rows[-1]["phase"] == "dual_write" else rows[0]
    assert row["divergences"] == 0 and row["zookeeper_brokers"] == [1, 2, 3] and row["kraft_controller_id"] == 101
    # trusted: the KRaft controller (101, not a broker) holding /controller is no inconsistency
    assert validate_snapshot(lake, CLUSTER, published.snapshot_id).failures == ()
    analyse(spark, lake.root, CLUSTER, list(DETECTORS.values()), Thresholds())  # every detector copes
    (phase,) = lake.read("migration_health", CLUSTER, [published.snapshot_id]).to_pylist()
    assert (phase["phase"], phase["status"], phase["severity"]) == ("dual_write", "ok", "ok")
    assert phase["phase_since"] == published.captured_at
    report = run_gates(lake, CLUSTER, published.snapshot_id, data_docs=False)
    assert not [r.name for r in report.failed() if r.name.startswith(("migration", "snapshots_read"))]

    # 4. a broker restarted as a KRaft broker leaves /brokers/ids; the controller still dual-writes
    cluster.move_brokers_to_kraft([1])
    cluster.wait_for(lambda s: sorted(s.brokers) == [2, 3], 60, "broker 1 to leave ZooKeeper")
    status = _wait_status(cluster, lambda st: st.kraft_brokers == (1,))
    assert status.phase == "dual_write" and status.zookeeper_brokers == (2, 3)

    # 5. all brokers on KRaft, controllers restarted without ZooKeeper: ZooKeeper is no longer written
    cluster.move_brokers_to_kraft([2, 3])
    cluster.finalize()
    monkeypatch.setattr(migration, "ZOOKEEPER_QUIET_S", 5.0)
    # the restarted controllers list the brokers as quorum observers once the brokers fetch from them again
    status = _wait_status(
        cluster, lambda st: st.phase == "post_migration" and st.kraft_brokers == (1, 2, 3), controllers=True
    )
    assert status.zookeeper_brokers == ()
    assert status.zookeeper_lag is not None and status.zookeeper_lag > 0  # the log moved on without ZooKeeper
    finalized = snapshot(cluster)
    lake.publish(snapshot_batch(finalized))
    analyse(spark, lake.root, CLUSTER, [DETECTORS["migration_health"]], Thresholds())
    (phase,) = lake.read("migration_health", CLUSTER, [finalized.snapshot_id]).to_pylist()
    assert (phase["phase"], phase["status"], phase["severity"]) == ("post_migration", "finalized", "warning")

    # a ZooKeeper setting pointed at the KRaft cluster (a broker, or a controller) fails at once, naming it
    for port in (cluster.broker_ports[1], cluster.controller_ports[101]):
        target = ZooKeeperTarget(f"127.0.0.1:{port}", "/kafka", timeout_s=3)
        with pytest.raises(NotZooKeeper, match=rf"names 127.0.0.1:{port}, a Kafka listener, not ZooKeeper"):
            ZooKeeperCollector(CLUSTER, target).collect()


def _wait_status(cluster: MigrationSandbox, check: object, controllers: bool = True) -> migration.MigrationStatus:
    found: list[migration.MigrationStatus] = []

    def ok(_: ClusterSnapshot) -> bool:
        status = migration_status(snapshot(cluster, controllers))
        if status is not None and check(status):  # type: ignore[operator]
            found.append(status)
            return True
        return False

    cluster.wait_for(ok, 90, "the migration status")
    return found[0]


def test_cli_up_status_down_in_migration_mode(tmp_path: Path) -> None:
    """`python -m sandbox up --mode migration` leaves a cluster in dual-write, for a person to watch."""
    root = tmp_path / "cli"

    def cli(verb: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sandbox", verb, "--mode", "migration", "--root", str(root)]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)

    up = cli("up")
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        summary = json.loads(up.stdout.strip().splitlines()[-1])
        assert summary["broker_modes"] == {"1": "migrating", "2": "migrating", "3": "migrating"}
        assert summary["migration"]["kraft_controller_id"] == 101 and summary["migration"]["kraft_metadata_offset"] >= 0
        status = json.loads(cli("status").stdout)
        assert status["controllers_running"] == {"101": True}
        assert status["brokers_running"] == {"1": True, "2": True, "3": True}
        pids = json.loads((root / "state.json").read_text())["pids"].values()
    finally:
        down = cli("down")
    assert down.returncode == 0, down.stderr
    deadline = time.monotonic() + 15  # the JVMs belong to the exited `up`: init reaps them
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in pids if _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return False
