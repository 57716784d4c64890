"""The silence DAG from Airflow's trigger form (`dag.test(run_conf=...)`): set a silence, list, end it; a
silence without an end or a reason fails the run naming the Param and stores nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.models import DagRun

from kafka_ops.alerting.silence_store import silences_of

pytestmark = [pytest.mark.dags, pytest.mark.usefixtures("airflow_db")]

DAG_FILE = Path(__file__).resolve().parents[2] / "dags" / "kafka_silence.py"


def returned(run: DagRun) -> Any:
    (ti,) = [ti for ti in run.get_task_instances() if ti.task_id == "silence"]
    return ti.xcom_pull(task_ids="silence")


def test_a_silence_is_set_listed_and_ended_from_the_trigger_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(f'lake_root = "{lake}"\n[[clusters]]\nname = "payments"\n')
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))

    def trigger(**conf: object):  # type: ignore[no-untyped-def]
        # a DAG of its own each time: dag.test(run_conf=...) leaves the Params' values in the DAG it ran
        return DagBag(dag_folder=str(DAG_FILE)).dags["kafka_silence"].test(run_conf={"cluster": "payments", **conf})

    added = trigger(brokers=[2], topics=["orders"], duration="2h", reason="disk swap on broker 2, ask ops")
    assert added.state == "success"
    (silence,) = silences_of(str(lake), "payments")
    assert (silence.brokers, silence.topics, silence.reason) == ((2,), ("orders",), "disk swap on broker 2, ask ops")
    assert returned(added)["added"]["id"] == silence.id
    assert silence.created_by == "dag_test"  # the triggering user (dag.test() triggers as `dag_test`)

    listed = trigger(action="list")
    assert [s["id"] for s in returned(listed)["silences"]] == [silence.id]
    assert trigger(action="end", silence_id=silence.id).state == "success"
    (ended,) = silences_of(str(lake), "payments")
    assert ended.ended_by is not None and ended.ends_at < silence.ends_at

    for refused in ({"duration": "2h"}, {"reason": "no end"}, {"action": "end", "silence_id": "s-nope"}):
        assert trigger(**refused).state == "failed"
    assert len(silences_of(str(lake), "payments")) == 1
