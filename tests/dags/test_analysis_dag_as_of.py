"""Run the analysis DAG with the `as_of` Param (`dag.test()` on a Delta lake): the batch current then
is validated, gated and reported, nobody is paged, and the present (the latest analysis,
`latest.html`) is left as it was.

The Spark jobs are marked done without running (`mark_success_pattern`), their as-of findings
published by hand: `tests/unit/analysis/test_analysis_as_of.py` runs the job's time travel, and a
spark-submit costs this test a minute and a half."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag

from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.validation.pipeline import latest_analysed
from tests.dags.conftest import DAGS_FOLDER
from tests.unit.snapshots import AT, small_snapshot
from tests.unit.validation.findings import healthy_zk, isr, publish_analysis

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow, pytest.mark.usefixtures("airflow_db")]


def test_an_as_of_run_judges_the_batch_current_then_and_acts_on_nothing(
    dag_bag: DagBag, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "lake"
    lake = open_lake(root, "delta")
    past = small_snapshot("s1", cluster="default")  # partition solo-0 offline
    past.captured_at = AT - timedelta(minutes=10)
    lake.publish(snapshot_batch(past))
    time.sleep(0.02)
    then = datetime.now(UTC).isoformat()
    time.sleep(0.02)
    present = small_snapshot("s2", cluster="default")
    lake.publish(snapshot_batch(present))
    publish_analysis(lake, "s2", healthy_zk(), cluster="default", captured_at=present.captured_at)
    monkeypatch.delenv("KAFKA_OPS_CONFIG", raising=False)
    monkeypatch.setenv("KAFKA_OPS_LAKE", str(root))
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", "delta")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[2]"}))

    findings_then = healthy_zk()
    findings_then["isr_health"] = [*findings_then["isr_health"], isr("solo", 0, [3], [], -1)]
    publish_analysis(lake, "s1", findings_then, cluster="default", captured_at=past.captured_at)  # the job's part

    # a DAG of its own: dag.test(run_conf=...) leaves the Param's value in the DAG it ran, and the
    # session's DagBag is shared by the other analysis DAG tests
    dag = DagBag(dag_folder=str(DAGS_FOLDER)).dags["kafka_health_analysis"]
    run = dag.test(run_conf={"as_of": then}, mark_success_pattern="analyse_.*")

    assert run.state == "success"
    assert {r["snapshot_id"] for r in lake.read("snapshot_validations", "default").to_pylist()} == {"s1"}
    page = (root / "_reports" / "default" / "s1.html").read_text()
    assert f"as of {datetime.fromisoformat(then):%Y-%m-%d %H:%M:%S} UTC: snapshot s1 captured" in page
    assert "no_offline_partitions" in page  # the gate failed then...
    assert not (root / "_alerting" / "default.alerts.jsonl").exists()  # ...and nobody was paged now
    assert not (root / "_reports" / "default" / "latest.html").exists()
    assert latest_analysed(lake, "default", "snapshots") == ("s2", present.captured_at)
    assert dag_bag.dags["kafka_health_analysis"].params["as_of"] is None  # the shared DAG is as it was
