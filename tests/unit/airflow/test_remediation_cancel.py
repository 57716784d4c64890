"""The cancel DAG's form and `parse_request`: every invalid Param refused by name, before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.definitions.param import ParamsDict
from airflow.sdk.exceptions import ParamValidationError

from kafka_ops.airflow import remediation_cancel
from kafka_ops.airflow.remediation_cancel import CancelRequest, parse_request, render_clear, render_preview
from kafka_ops.lake.open import lake_of
from kafka_ops.planning import plan_replication_factor
from kafka_ops.planning.request import ParamError
from kafka_ops.remediation.store import save_plan
from kafka_ops.settings import ClusterConfig, Settings
from tests.unit.planning.builders import cluster


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(lake_root=str(tmp_path / "lake"), clusters=(ClusterConfig("c1"), ClusterConfig("c2")))


@pytest.fixture
def plan_id(settings: Settings) -> str:
    plan = plan_replication_factor(cluster({1: "a", 2: "b"}, {"t": {0: (1,), 1: (2,)}}), ["t"], 2)
    save_plan(lake_of(settings), plan, created_by="test")
    return plan.plan_id


def values(stored: str, **overrides: Any) -> dict[str, Any]:
    return {"cluster": "c1", "plan_id": stored, "dry_run": True, "wait_seconds": 120, **overrides}


def test_the_form_requires_a_plan_id_and_bounds_the_wait() -> None:
    form = ParamsDict(remediation_cancel.params())
    with pytest.raises(ParamValidationError, match="plan_id"):
        form.validate()  # no plan id: Airflow refuses to create the run
    good = "0123456789abcdef"
    form.update({"plan_id": good})
    assert form.validate() == {
        "cluster": "default", "plan_id": good, "action": "cancel", "dry_run": True, "wait_seconds": 120
    }  # fmt: skip
    for name, bad in [("plan_id", "not-a-plan"), ("wait_seconds", -1), ("wait_seconds", 3601), ("action", "drop")]:
        form = ParamsDict(remediation_cancel.params())
        with pytest.raises(ParamValidationError, match=name):
            form.update({"plan_id": good, name: bad})
            form.validate()


def test_a_valid_request(settings: Settings, plan_id: str) -> None:
    request = parse_request(values(plan_id, dry_run=False, wait_seconds=0), settings)
    assert request == CancelRequest(settings.cluster("c1"), settings.lake_root, plan_id, False, 0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cluster": "nope"}, "Param 'cluster': no cluster named 'nope'"),
        ({"plan_id": "abc"}, "Param 'plan_id': 'abc' is not a plan id"),
        ({"plan_id": "0123456789abcdef"}, "Param 'plan_id': no stored plan 0123456789abcdef for cluster 'c1'"),
        ({"cluster": "c2"}, "Param 'plan_id': no stored plan {plan_id} for cluster 'c2'"),
        ({"dry_run": "no"}, "Param 'dry_run': must be true or false, got 'no'"),
        ({"wait_seconds": 1.5}, "Param 'wait_seconds': must be a whole number of seconds from 0 to 3600, got 1.5"),
        ({"wait_seconds": True}, "Param 'wait_seconds': must be a whole number"),
        ({"topics": ["t"]}, "Param 'topics': is not a Param of this DAG"),
        ({"action": "drop"}, "Param 'action': must be one of ['cancel', 'clear_throttles'], got 'drop'"),
    ],
)
def test_invalid_params_are_named(settings: Settings, plan_id: str, overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_request(values(plan_id, **overrides), settings)
    assert str(caught.value).startswith(message.format(plan_id=plan_id)), caught.value


def test_the_preview_says_what_a_cancel_would_do() -> None:
    summary = {
        "plan_id": "0123456789abcdef",
        "kind": "replication_factor",
        "cluster": "c1",
        "status": "running",
        "in_flight": ["t-0"],
        "batches_done": [],
        "batches": 2,
        "throttled_brokers": [1, 2],
        "throttled_topics": ["t"],
        "rollback": "/lake/_plans/c1/0123456789abcdef/rollback.json",
        "would_refuse": None,
    }
    text = render_preview(summary)
    assert "in flight now    1 partition(s): t-0" in text
    assert "batches done     [] of 2" in text and "trigger again with dry_run = false" in text
    refused = render_preview({**summary, "would_refuse": "writes are disabled for cluster 'c1'"})
    assert "a cancel would be REFUSED: writes are disabled for cluster 'c1'" in refused
    assert "trigger again" not in refused


def test_a_clear_throttles_request_and_its_preview(settings: Settings, plan_id: str) -> None:
    request = parse_request(values(plan_id, action="clear_throttles"), settings)
    assert (request.action, request.dry_run) == ("clear_throttles", True)
    kept = {"broker 3": "throttled move(s) in flight through it: u-0"}
    summary = {"plan_id": plan_id, "cluster": "c1", "status": "done", "brokers_cleared": [1, 2],
               "topics_cleared": ["t"], "kept": kept}  # fmt: skip
    text = render_clear(summary)
    assert "would remove     broker rates on [1, 2], replica lists of ['t']" in text
    assert "would keep       {'broker 3': 'throttled move(s) in flight through it: u-0'}" in text
