"""The remediation DAGs' trigger forms and `parse_request`: every invalid Param is refused by name."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.definitions.param import ParamsDict
from airflow.sdk.exceptions import ParamValidationError

from kafka_ops.airflow.remediation_params import form_params
from kafka_ops.errors import ConfigError
from kafka_ops.lake.open import lake_of
from kafka_ops.planning import plan_decommission, plan_replication_factor
from kafka_ops.planning.request import (
    ELECTION_FORM,
    FORMS,
    REASSIGNMENT_FORM,
    ParamError,
    RemediationRequest,
    RequestForm,
    parse_request,
)
from kafka_ops.remediation.store import save_plan, stored_plan
from kafka_ops.settings import ClusterConfig, Settings
from tests.unit.planning.builders import cluster

RACKS = {1: "a", 2: "b", 3: "c"}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(lake_root=str(tmp_path / "lake"), clusters=(ClusterConfig("c1"), ClusterConfig("c2")))


@pytest.fixture
def stored(settings: Settings) -> dict[str, str]:
    """Plan ids stored for cluster c1: an RF 1 → 2 plan of topic t, and a decommission of broker 3."""
    snap = cluster(RACKS, {"t": {0: (1,), 1: (2,)}, "u": {0: (3, 1)}})
    lake = lake_of(settings)
    rf = plan_replication_factor(snap, ["t"], 2)
    decommission = plan_decommission(snap, [3])
    for plan in (rf, decommission):
        save_plan(lake, plan, created_by="test")
    return {"replication_factor": rf.plan_id, "decommission": decommission.plan_id}


def dry_run(form: RequestForm = REASSIGNMENT_FORM, **overrides: Any) -> dict[str, Any]:
    """The form's defaults (what the UI submits untouched), for cluster c1, with `overrides`."""
    params: dict[str, Any] = {name: param.value for name, param in form_params(form).items()}
    params["cluster"] = "c1"
    if form is REASSIGNMENT_FORM:
        params.update(topics=["t"], replication_factor=2)
    params.update(overrides)
    return params


# -- the forms ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", [ELECTION_FORM, REASSIGNMENT_FORM], ids=lambda f: f.dag_id)
def test_forms_render_as_usable_params(form: RequestForm) -> None:
    params = form_params(form)
    assert set(params) == form.fields
    for name, param in params.items():
        assert param.schema.get("title") and param.description, f"{name} needs a label and a help text"
    action = params["action"].schema
    assert action["enum"] == list(form.actions)
    assert set(action["values_display"]) == set(form.actions)  # readable labels for every action
    assert params["dry_run"].value is True and params["dry_run"].schema["type"] == "boolean"
    assert params["plan_id"].value == ""
    ParamsDict(params).validate()  # the defaults pass the schema: the form can be submitted as it is


def test_the_two_forms_split_the_actions() -> None:
    assert ELECTION_FORM.actions == ("preferred_election", "leader_reorder")
    assert REASSIGNMENT_FORM.actions == (
        "replication_factor",
        "decommission",
        "replica_balance",
        "log_dir_balance",
        "rollback",
        "finish",
        "unregister_broker",
    )
    assert {"throttle_bytes_per_s", "brokers", "replication_factor"} <= REASSIGNMENT_FORM.fields
    assert not {"throttle_bytes_per_s", "brokers", "replication_factor"} & ELECTION_FORM.fields
    assert form_params(REASSIGNMENT_FORM)["throttle_bytes_per_s"].schema["minimum"] == 1_000_000
    assert set(FORMS) == {"kafka_preferred_leader_election", "kafka_partition_reassignment"}


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("replication_factor", 0, "0 is less than the minimum of 1"),
        ("batch_size", 0, "0 is less than the minimum of 1"),
        ("throttle_bytes_per_s", 1000, "1000 is less than the minimum of 1000000"),
        ("action", "delete_everything", "is not one of"),
        ("dry_run", "no", "is not of type 'boolean'"),
        ("brokers", ["3"], "is not of type 'integer'"),
        ("brokers", [2**31], "2147483648 is greater than the maximum of 2147483647"),
        ("replication_factor", 2**15, "32768 is greater than the maximum of 32767"),
        ("batch_size", 2**31, "2147483648 is greater than the maximum of 2147483647"),
        ("throttle_bytes_per_s", 2**63, "9223372036854775808 is greater than the maximum of 9223372036854775807"),
        ("topic_pattern", "a" * 501, "is too long"),
    ],
)
def test_the_schema_refuses_before_a_run_exists(name: str, value: Any, message: str) -> None:
    """What Airflow checks when a run is triggered (UI, API, `dag.test(run_conf=...)`)."""
    params = ParamsDict(form_params(REASSIGNMENT_FORM))
    with pytest.raises(ParamValidationError, match=f"Invalid input for param {name}: .*{message}"):
        params[name] = value


# -- valid requests ---------------------------------------------------------------------------------------


def test_a_dry_run_request(settings: Settings) -> None:
    params = dry_run(topics=[" t ", "", "u"], throttle_bytes_per_s=None, batch_size=3)
    request = parse_request(params, settings, REASSIGNMENT_FORM, stored=stored_plan)
    assert request == RemediationRequest(
        cluster=ClusterConfig("c1"),
        lake_root=settings.lake_root,
        action="replication_factor",
        dry_run=True,
        plan_id=None,
        topics=("t", "u"),  # trimmed, the text area's blank line dropped
        replication_factor=2,
        throttle_bytes_per_s=None,
        batch_size=3,
    )
    assert request.summary()["topics"] == ["t", "u"]


def test_requests_per_action(settings: Settings) -> None:
    election = parse_request(
        dry_run(ELECTION_FORM, topic_pattern=r"orders\..*"), settings, ELECTION_FORM, stored=stored_plan
    )
    assert (election.action, election.topics, election.topic_pattern) == ("preferred_election", (), r"orders\..*")
    assert election.batch_size == 100
    everything = parse_request(
        dry_run(ELECTION_FORM, action="leader_reorder"), settings, ELECTION_FORM, stored=stored_plan
    )
    assert (everything.topics, everything.topic_pattern) == ((), None)
    decommission = dry_run(action="decommission", topics=[], replication_factor=None, brokers=[3, 1])
    assert parse_request(decommission, settings, REASSIGNMENT_FORM, stored=stored_plan).brokers == (1, 3)
    balance = dry_run(action="replica_balance", topics=[], replication_factor=None)
    assert parse_request(balance, settings, REASSIGNMENT_FORM, stored=stored_plan).brokers == ()


def test_executing_a_stored_plan(settings: Settings, stored: dict[str, str]) -> None:
    plan_id = stored["replication_factor"]
    same_form = dry_run(dry_run=False, plan_id=plan_id)  # re-triggered with the dry run's values
    assert parse_request(same_form, settings, REASSIGNMENT_FORM, stored=stored_plan).plan_id == plan_id
    minimal = {"cluster": "c1", "action": "replication_factor", "dry_run": False, "plan_id": f" {plan_id} "}
    request = parse_request(minimal, settings, REASSIGNMENT_FORM, stored=stored_plan)
    assert (request.plan_id, request.topics, request.replication_factor) == (plan_id, (), None)
    pattern = {**minimal, "topic_pattern": "t|x"}
    assert parse_request(pattern, settings, REASSIGNMENT_FORM, stored=stored_plan).topic_pattern == "t|x"


# -- every invalid Param, named -----------------------------------------------------------------------------

INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("cluster", {"cluster": "nope"}, "Param 'cluster': no cluster named 'nope' in the settings (have: ['c1', 'c2'])"),
    ("cluster", {"cluster": ""}, "Param 'cluster': must name a cluster from the settings, got ''"),
    ("action", {"action": "preferred_election"}, "Param 'action': must be one of ['replication_factor', 'decom"),
    ("action", {"action": None}, "Param 'action': must be one of"),
    ("topics", {"topics": ["a b"]}, "Param 'topics': 'a b' is not a Kafka topic name"),
    ("topics", {"topics": ["t", "t"]}, "Param 'topics': lists t more than once"),
    ("topics", {"topics": "t"}, "Param 'topics': must be a list of topic names, got 't'"),
    ("topics", {"topics": []}, "Param 'topics': name at least one topic (or set topic_pattern)"),
    ("topics", {"action": "decommission", "brokers": [3], "replication_factor": None}, "Param 'topics': is not used"),
    ("topic_pattern", {"topic_pattern": "t.*"}, "Param 'topic_pattern': give topics or a topic pattern, not both"),
    ("topic_pattern", {"topics": [], "topic_pattern": "("}, "Param 'topic_pattern': '(' is not a valid regular"),
    ("topic_pattern", {"topics": [], "topic_pattern": 3}, "Param 'topic_pattern': must be a regular expression"),
    # found by fuzzing (tests/unit/airflow/test_params_fuzz.py): re.compile raised OverflowError / RecursionError
    ("topic_pattern", {"topics": [], "topic_pattern": "a{4294967296}"},
     "Param 'topic_pattern': 'a{4294967296}' is not a valid regular expression: the repetition number is too large"),
    ("topic_pattern", {"topics": [], "topic_pattern": "(" * 1000 + ")" * 1000},
     "Param 'topic_pattern': is 2000 characters long, at most 500 are accepted: list the topics in topics instead"),
    ("topic_pattern", {"topics": [], "topic_pattern": "a" * 501}, "Param 'topic_pattern': is 501 characters long"),
    ("brokers", {"brokers": [1]}, "Param 'brokers': is not used by action replication_factor: clear it"),
    ("brokers", {"action": "decommission", "topics": [], "replication_factor": None}, "Param 'brokers': name at"),
    ("brokers", {"action": "decommission", "topics": [], "replication_factor": None, "brokers": ["3"]},
     "Param 'brokers': broker ids are whole numbers >= 0 (at most 2147483647), got '3'"),
    ("brokers", {"action": "decommission", "topics": [], "replication_factor": None, "brokers": [2**31]},
     "Param 'brokers': broker ids are whole numbers >= 0 (at most 2147483647), got 2147483648"),
    ("brokers", {"action": "replica_balance", "topics": [], "replication_factor": None, "brokers": [2, 2]},
     "Param 'brokers': lists broker(s) [2] more than once"),
    ("brokers", {"action": "decommission", "topics": [], "replication_factor": None, "brokers": 3},
     "Param 'brokers': must be a list of broker ids"),
    ("replication_factor", {"replication_factor": 0}, "Param 'replication_factor': must be at least 1, got 0"),
    ("replication_factor", {"replication_factor": True}, "Param 'replication_factor': must be a whole number"),
    ("replication_factor", {"replication_factor": 2**15}, "Param 'replication_factor': must be at most 32767"),
    ("batch_size", {"batch_size": 2**31}, "Param 'batch_size': must be at most 2147483647, got 2147483648"),
    ("throttle_bytes_per_s", {"throttle_bytes_per_s": 2**63},
     "Param 'throttle_bytes_per_s': must be at most 9223372036854775807 (Kafka's limit), got 9223372036854775808"),
    ("replication_factor", {"replication_factor": None}, "Param 'replication_factor': required for action"),
    ("replication_factor", {"action": "decommission", "topics": [], "brokers": [3]},
     "Param 'replication_factor': is only used by action replication_factor, not decommission"),
    ("throttle_bytes_per_s", {"throttle_bytes_per_s": 500},
     "Param 'throttle_bytes_per_s': must be at least 1000000 bytes/s (1 MB/s), or empty for no throttle, got 500"),
    ("throttle_bytes_per_s", {"throttle_bytes_per_s": 0}, "Param 'throttle_bytes_per_s': must be at least"),
    ("time_budget_minutes", {"time_budget_minutes": 0}, "Param 'time_budget_minutes': must be a number of minutes > 0"),
    ("time_budget_minutes", {"time_budget_minutes": "60"}, "Param 'time_budget_minutes': must be a number of minutes"),
    ("time_budget_minutes", {"time_budget_minutes": True}, "Param 'time_budget_minutes': must be a number of minutes"),
    ("batch_size", {"batch_size": 0}, "Param 'batch_size': must be at least 1, got 0"),
    ("batch_size", {"batch_size": "10"}, "Param 'batch_size': must be a whole number, got '10'"),
    ("dry_run", {"dry_run": "false"}, "Param 'dry_run': must be true or false, got 'false'"),
    ("approve_in_ui", {"approve_in_ui": "yes"}, "Param 'approve_in_ui': must be true or false, got 'yes'"),
    ("approve_in_ui", {"approve_in_ui": True, "dry_run": False},
     "Param 'approve_in_ui': plans first and executes only what an approver approves in this run"),
    ("detected", {"detected": 5}, "Param 'detected': is set by the automatic election on a dry run"),
    ("detected", {"detected": "x" * 1001},
     "Param 'detected': is set by the automatic election on a dry run (at most 1000"),
    ("plan_id", {"dry_run": False}, "Param 'plan_id': required when dry_run is false: run a dry run first"),
    ("plan_id", {"dry_run": False, "plan_id": "abc"}, "Param 'plan_id': 'abc' is not a plan id (16 hex digits"),
    ("plan_id", {"plan_id": "0123456789abcdef"}, "Param 'plan_id': is set (0123456789abcdef) but dry_run is true"),
    ("plan_id", {"dry_run": False, "plan_id": "0123456789abcdef"},
     "Param 'plan_id': no stored plan 0123456789abcdef for cluster 'c1'"),
    ("replication_fator", {"replication_fator": 2}, "Param 'replication_fator': is not a Param of this DAG"),
    ("source_plan_id", {"source_plan_id": "0123456789abcdef"},
     "Param 'source_plan_id': is only used by actions rollback and finish, not replication_factor: clear it"),
    ("source_plan_id", {"action": "rollback", "topics": [], "replication_factor": None},
     "Param 'source_plan_id': required for action rollback: the plan_id of the plan to rollback"),
    ("source_plan_id", {"action": "finish", "topics": [], "replication_factor": None, "source_plan_id": "x"},
     "Param 'source_plan_id': 'x' is not a plan id"),
    ("source_plan_id", {"action": "rollback", "topics": [], "replication_factor": None,
                        "source_plan_id": "0123456789abcdef"},
     "Param 'source_plan_id': no stored plan 0123456789abcdef for cluster 'c1'"),
]  # fmt: skip


@pytest.mark.parametrize(("field", "overrides", "message"), INVALID, ids=[f"{f}-{i}" for i, (f, _, _) in
                                                                          enumerate(INVALID)])  # fmt: skip
def test_invalid_params_are_named(settings: Settings, field: str, overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_request(dry_run(**overrides), settings, REASSIGNMENT_FORM, stored=stored_plan)
    assert str(caught.value).startswith(message)
    assert caught.value.field == field
    assert isinstance(caught.value, ConfigError)


def test_a_pattern_that_overflows_the_stack_is_refused_with_the_param_named(settings: Settings) -> None:
    """Within the length bound no pattern nests deep enough to exhaust the stack from a task; from a
    deep enough stack one does, and is refused, never raised as a RecursionError."""
    params = dry_run(topics=[], topic_pattern="(" * 250 + ")" * 250)
    assert (
        parse_request(params, settings, REASSIGNMENT_FORM, stored=stored_plan).topic_pattern == params["topic_pattern"]
    )

    def from_depth(depth: int) -> RemediationRequest:
        return (
            from_depth(depth - 1) if depth else parse_request(params, settings, REASSIGNMENT_FORM, stored=stored_plan)
        )

    re.purge()  # a compiled pattern is cached: compile it again, here
    with pytest.raises(ParamError, match=r"^Param 'topic_pattern': '\(\(\(.* is not a valid regular expression"):
        from_depth(sys.getrecursionlimit() - 400)


@pytest.mark.parametrize("value", [[[[]]], {"a": {"b": []}}], ids=["list", "object"])
def test_deeply_nested_values_are_refused_with_the_param_named(settings: Settings, value: Any) -> None:
    """Regression (fuzzing): the message's repr of a value nested 100,000 deep raised RecursionError."""
    deep: Any = value
    for _ in range(100_000):
        deep = [deep]
    for name in ("topics", "brokers", "topic_pattern", "batch_size", "cluster", "action", "dry_run"):
        with pytest.raises(ParamError, match=rf"^Param '{name}': "):
            parse_request(dry_run(**{name: deep}), settings, REASSIGNMENT_FORM, stored=stored_plan)


def test_a_param_name_of_another_type_is_refused(settings: Settings) -> None:
    """Regression (fuzzing): sorting unknown names of mixed types raised TypeError."""
    with pytest.raises(ParamError, match=r"^Param '1': is not a Param of this DAG"):
        parse_request({**dry_run(), 1: "x", "zz": "y"}, settings, REASSIGNMENT_FORM, stored=stored_plan)  # type: ignore[dict-item]


def test_every_param_has_an_invalid_case() -> None:
    assert REASSIGNMENT_FORM.fields - {f for f, _, _ in INVALID} == set()
    assert ELECTION_FORM.fields <= REASSIGNMENT_FORM.fields


def test_the_election_form_refuses_reassignment_params(settings: Settings) -> None:
    with pytest.raises(ParamError, match=r"^Param 'brokers': is not a Param of this DAG"):
        parse_request(dry_run(ELECTION_FORM, brokers=[3]), settings, ELECTION_FORM, stored=stored_plan)
    with pytest.raises(ParamError, match=r"^Param 'action': must be one of \['preferred_election', 'leader_reo"):
        parse_request(dry_run(ELECTION_FORM, action="decommission"), settings, ELECTION_FORM, stored=stored_plan)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"action": "decommission", "topics": [], "replication_factor": None},
         "Param 'plan_id': plan {rf} is a replication_factor plan, but action is decommission"),
        ({"replication_factor": 3},
         "Param 'replication_factor': is 3, but plan {rf} was made for 2: a plan is executed as it was reviewed"),
        ({"topics": ["u"]}, "Param 'topics': is ['u'], but plan {rf} was made for ['t']"),
        ({"topics": [], "topic_pattern": "u.*"}, "Param 'topic_pattern': 'u.*' does not match the topics of plan {rf}"),
        ({"cluster": "c2"}, "Param 'plan_id': no stored plan {rf} for cluster 'c2'"),
    ],
)  # fmt: skip
def test_an_execution_must_name_the_reviewed_plan(
    settings: Settings, stored: dict[str, str], overrides: dict[str, Any], message: str
) -> None:
    params = dry_run(dry_run=False, plan_id=stored["replication_factor"], **overrides)
    with pytest.raises(ParamError) as caught:
        parse_request(params, settings, REASSIGNMENT_FORM, stored=stored_plan)
    assert str(caught.value).startswith(message.format(rf=stored["replication_factor"]))


def test_an_execution_of_a_decommission_checks_its_brokers(settings: Settings, stored: dict[str, str]) -> None:
    base = {"cluster": "c1", "action": "decommission", "dry_run": False, "plan_id": stored["decommission"]}
    assert parse_request({**base, "brokers": [3]}, settings, REASSIGNMENT_FORM, stored=stored_plan).brokers == (3,)
    with pytest.raises(ParamError, match=r"^Param 'brokers': is \[2\], but plan \w+ was made for \[3\]"):
        parse_request({**base, "brokers": [2]}, settings, REASSIGNMENT_FORM, stored=stored_plan)


def test_a_rollback_names_the_plan_to_roll_back(settings: Settings, stored: dict[str, str]) -> None:
    source = stored["replication_factor"]
    params = dry_run(action="rollback", topics=[], replication_factor=None, source_plan_id=f" {source} ")
    request = parse_request(params, settings, REASSIGNMENT_FORM, stored=stored_plan)
    assert (request.action, request.source_plan_id, request.topics) == ("rollback", source, ())
    assert request.summary()["source_plan_id"] == source
    assert (
        parse_request({**params, "action": "finish"}, settings, REASSIGNMENT_FORM, stored=stored_plan).source_plan_id
        == source
    )
    assert "source_plan_id" not in ELECTION_FORM.fields
