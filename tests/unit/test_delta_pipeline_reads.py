"""The pipeline's readers see the same lake whether it is Parquet or Delta: the report scenario
written through each format's real writer gives the same validation verdicts (Great Expectations),
report figures and web metrics. The gates and the digest, which need real findings, are run on a
Delta lake by tests/dags/test_analysis_dag_on_spark_connect.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.report.data import gather
from kafka_ops.validation.lake_batches import find_commit, find_day_commits, read_batch_table
from kafka_ops.validation.pipeline import validate_batches
from kafka_ops.web.app import build_app
from tests.unit.report import scenario
from tests.unit.web import lakes

FORMATS = ("parquet", "delta")


@pytest.fixture(scope="module")
def scenario_lakes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Lake]:
    """The report scenario, analysed, in each format."""
    return {f: scenario.build(open_lake(tmp_path_factory.mktemp(f), f)) for f in FORMATS}


def per_format(scenario_lakes: dict[str, Lake], read: Any) -> dict[str, Any]:
    return {f: read(lake) for f, lake in scenario_lakes.items()}


def test_batch_reads_find_the_same_committed_batches(scenario_lakes: dict[str, Lake]) -> None:
    def reads(lake: Lake) -> Any:
        batch = find_commit(lake, "snapshots", "c1", "s4")
        assert batch is not None
        partitions = read_batch_table(lake, batch, "partitions")
        assert partitions is not None
        day = sorted(str(r["snapshot_id"]) for r in find_day_commits(lake, "snapshots", "c1", batch.dt))
        return batch.dt, batch.commit, sorted(map(str, partitions.to_pylist())), day, lake.days("snapshots", "c1")

    found = per_format(scenario_lakes, reads)
    assert found["delta"] == found["parquet"]
    assert found["delta"][1]["snapshot_id"] == "s4" and found["delta"][2]  # not vacuously equal
    for lake in scenario_lakes.values():
        assert find_commit(lake, "snapshots", "c1", "never") is None


def test_validation_and_report_figures_agree(scenario_lakes: dict[str, Lake]) -> None:
    def validation(lake: Lake) -> Any:
        verdicts = validate_batches(lake, "c1", scenario.NOW)
        for source in ("snapshots", "group_snapshots"):
            verdicts[source].pop("seconds")  # how long it took
        return json.loads(json.dumps(verdicts, default=str).replace(lake.root, "<lake>"))  # Data Docs paths

    validations = per_format(scenario_lakes, validation)
    assert validations["delta"] == validations["parquet"]
    assert validations["delta"]["snapshots"]["snapshot_id"] == "s4"
    assert validations["delta"]["group_snapshots"]["trusted"] is not None
    report = per_format(scenario_lakes, lambda lake: gather(lake, "c1", now=scenario.NOW))
    assert report["delta"].lag.items  # figures read from the group tables, not empty on both
    shown = {f: repr(data).replace(scenario_lakes[f].root, "<lake>") for f, data in report.items()}  # Data Docs
    assert shown["delta"] == shown["parquet"]


def test_web_metrics_read_a_delta_lake_as_they_read_a_parquet_one(tmp_path: Path) -> None:
    scraped = {}
    for f in FORMATS:
        lakes.build(tmp_path / f, f)
        settings = lakes.settings(tmp_path / f, lake_format=f)  # type: ignore[arg-type]
        response = TestClient(build_app(settings, clock=lambda: lakes.NOW)).get("/metrics")
        assert response.status_code == 200
        scraped[f] = response.text
    assert "kafka_consumergroup_group_lag{" in scraped["delta"]
    assert scraped["delta"] == scraped["parquet"]
