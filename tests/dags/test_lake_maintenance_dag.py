"""The lake maintenance DAG's shape: daily, one run at a time, retention before compaction."""

from __future__ import annotations

import pytest
from airflow.dag_processing.dagbag import DagBag

pytestmark = pytest.mark.dags


def test_lake_maintenance_dag_shape(dag_bag: DagBag) -> None:
    dag = dag_bag.dags["kafka_lake_maintenance"]
    assert dag.max_active_runs == 1
    assert dag.get_task("compact_and_vacuum").upstream_task_ids == {"expire"}
    assert all(t.retries == 2 for t in dag.tasks)
    assert dag.schedule == "30 1 * * *"
