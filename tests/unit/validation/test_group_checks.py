"""The checks that page straight from a group collection read its window from the lake and rate it as
the Spark analysis does (`lag_status`, on the same lake), and compose the catalogue's problems."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.lag_status import DETECTOR
from kafka_ops.errors import LakeError
from kafka_ops.lake.open import open_lake
from kafka_ops.problems import groups as catalogue
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation import group_checks
from tests.unit.group_history import collections


@pytest.mark.parametrize(("lake_format", "seed"), [("parquet", 1), ("delta", 2)])
def test_the_same_rows_as_the_spark_analysis_of_the_same_lake(
    spark: SparkSession, tmp_path: Path, lake_format: str, seed: int
) -> None:
    lake = open_lake(tmp_path / "lake", lake_format)
    ids = collections(lake, 16, seed)
    analyse(spark, lake.root, "c1", [DETECTOR], Thresholds(), lake_format=lake_format)

    look = group_checks.look(lake, "c1", ids[-1], Thresholds())

    for table in ("lag_status_partitions", "lag_status_groups"):
        published = [{k: v for k, v in r.items() if k not in ("cluster", "dt")}
                     for r in lake.read(table, "c1", [f"{ids[-1]}"]).to_pylist()]  # fmt: skip
        assert sorted(look.findings.rows(table) or [], key=repr) == sorted(published, key=repr), table
    statuses = {r["group_id"]: r["status"] for r in look.findings.rows("lag_status_groups") or []}
    assert statuses["stopped"] == "ERR" and statuses["moving"] == "OK", statuses
    assert sorted(look.problems) == sorted(f"{catalogue.IN_ERR}:{g}" for g, s in statuses.items() if s == "ERR")
    problem = look.problems[f"{catalogue.IN_ERR}:stopped"]
    assert problem.title == "consumer group stopped is in ERR"
    assert problem.since == min(r["last_commit_at"] for r in look.findings.rows("lag_status_partitions") or []
                                if r["group_id"] == "stopped")  # fmt: skip


def test_one_collection_rates_its_samples_ok_and_an_unknown_collection_is_named(tmp_path: Path) -> None:
    """One sample has nothing to compare with (OK); the commit log's two commits of one offset do (STALL)."""
    lake = open_lake(tmp_path / "lake", "parquet")
    ids = collections(lake, 1, 0)
    look = group_checks.look(lake, "c1", ids[0], Thresholds())
    assert look.summary()["groups"] == 4 and sorted(look.problems) == [f"{catalogue.IN_ERR}:logged"]
    with pytest.raises(LakeError, match="no group collection 'g99' of cluster 'c1'"):
        group_checks.look(lake, "c1", "g99", Thresholds())
