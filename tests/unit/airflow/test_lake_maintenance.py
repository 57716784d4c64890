"""The maintenance DAG's task bodies on real tmp lakes: progress in the task log, counts in XCom."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowSkipException

from kafka_ops.airflow.lake_maintenance import expire_task, tidy_task
from kafka_ops.lake.open import open_lake
from kafka_ops.settings import Settings
from tests.unit.lake_maintainers import policy
from tests.unit.test_lake_maintenance import DAY0, publish_days, whole_batches


def test_expire_then_tidy_on_a_delta_lake(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(lake_root=str(tmp_path / "lake"), lake_format="delta", lake=policy(keep_days=1))
    lake = open_lake(settings.lake_root, "delta")
    ids = publish_days(lake, days=3, per_day=3)
    now = DAY0 + timedelta(days=3, hours=1, minutes=30)
    caplog.set_level(logging.INFO, logger="kafka_ops.airflow.lake_maintenance")

    expired = expire_task(now, settings)
    assert expired == {"snapshots": {"rows": 6, "files": 6, "days": ["2026-11-01", "2026-11-02"]}}
    tidied = tidy_task(now, settings)
    assert tidied["partitions"]["partitions_compacted"] == 1  # the closed day kept (expired ones go next run)
    assert all(t["most_files_in_a_closed_day"] == 1 for t in tidied.values())
    assert whole_batches(lake) == {i for i in ids if i.startswith("d2")}
    log = caplog.text
    assert "expired snapshots: 6 commit rows in 6 files of days 2026-11-01, 2026-11-02 (before 2026-11-03)" in log
    assert "partitions cluster=c1 dt=2026-11-03: 3 -> 1 files" in log
    assert "files vacuumed (older than 0 h), checkpoint at version" in log

    assert set(expire_task(now, settings)) == {"partitions", "brokers", "configs", "controller", "reassignments",
                                               "admin_requests"}  # fmt: skip
    assert all(t["partitions_compacted"] == 0 for t in tidy_task(now, settings).values())


def test_tidy_skips_a_parquet_lake_after_expiring_it(tmp_path: Path) -> None:
    settings = Settings(lake_root=str(tmp_path / "lake"), lake_format="parquet", lake=policy(keep_days=1))
    lake = open_lake(settings.lake_root, "parquet")
    ids = publish_days(lake, days=2, per_day=2)
    assert expire_task(DAY0 + timedelta(days=2), settings)["snapshots"]["rows"] == 2
    assert whole_batches(lake) == {i for i in ids if i.startswith("d1")}
    with pytest.raises(AirflowSkipException, match="is Parquet: one file per batch and no log"):
        tidy_task(DAY0 + timedelta(days=2), settings)
