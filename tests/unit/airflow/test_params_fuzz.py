"""Fuzzing the remediation DAGs' Params and the cancel DAG's: what an operator (or the REST API) may
send: no value may crash the validation untyped, as `topic_pattern` values such as `a{4294967296}` or
1,000 nested parentheses would (OverflowError, RecursionError from `re.compile`) were they not checked.

Hypothesis starts from each form's defaults for every action, and replaces Params with any JSON
(wrong types, booleans for numbers, numbers beyond Kafka's int32/int64, lone surrogates, arrays
nested 5,000 deep), regular expressions assembled from their syntax (huge repetitions, deep
groups), stored and unknown plan ids, and names that are no Param. The contract: a request every
value of which is in range and usable, or `ParamError` naming the Param, nothing else.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_ops.airflow import remediation_cancel
from kafka_ops.airflow.remediation_params import form_params
from kafka_ops.kafka_types import INT32_MAX, INT64_MAX, topic_name_problem
from kafka_ops.lake.store import Lake
from kafka_ops.planning import plan_decommission, plan_replication_factor
from kafka_ops.planning.request import (
    FORMS,
    MAX_PATTERN_LENGTH,
    MIN_THROTTLE,
    ParamError,
    RemediationRequest,
    parse_request,
)
from kafka_ops.remediation.store import save_plan, stored_plan
from kafka_ops.settings import ClusterConfig, Settings
from tests.unit.json_strategies import FUZZ, VALUES
from tests.unit.planning.builders import cluster

REGEX_PARTS = ["t", "a", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "\\", "^", "$", "-", "(?i)", "(?P<n>",
               "(?=", "(?<=a)", "{4294967296}", "{1,2}", "{2,1}", "\\d", "\\1", "\ud800", "²"]  # fmt: skip
PATTERNS = st.one_of(
    st.lists(st.sampled_from(REGEX_PARTS), max_size=12).map("".join),
    st.integers(0, 1200).map(lambda n: "(" * n + ")" * n),
    st.sampled_from(["a{4294967296}", "a{4294967295}", "t.*", "(a+)+", "x" * (MAX_PATTERN_LENGTH + 1)]),
)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, list[str]]:
    """Settings with clusters c1 and c2, and the ids of two plans stored for c1."""
    settings = Settings(str(tmp_path_factory.mktemp("lake")), (ClusterConfig("c1"), ClusterConfig("c2")))
    snap = cluster({1: "a", 2: "b", 3: "c"}, {"t": {0: (1,), 1: (2,)}, "u": {0: (3, 1)}})
    plans = [plan_replication_factor(snap, ["t"], 2), plan_decommission(snap, [3])]
    for plan in plans:
        save_plan(Lake(settings.lake_root), plan, created_by="test")
    return settings, [p.plan_id for p in plans]


def params_of(draw: st.DrawFn, defaults: dict[str, Any], plan_ids: list[str]) -> dict[str, Any]:
    """`defaults` with some Params replaced by anything, and sometimes a name that is no Param."""
    params = dict(defaults)
    values = st.one_of(VALUES, PATTERNS, st.sampled_from([*plan_ids, "c1", "c2", True, False, [3], ["t"], 2]))
    for name in draw(st.lists(st.sampled_from(sorted(defaults)), max_size=4, unique=True)):
        params[name] = draw(values)
    if draw(st.integers(0, 9)) == 0:
        params[draw(st.one_of(st.text(max_size=5), st.integers()))] = draw(values)
    return params


@st.composite
def remediation_params(draw: st.DrawFn, plan_ids: list[str]) -> tuple[str, dict[str, Any]]:
    form = FORMS[draw(st.sampled_from(sorted(FORMS)))]
    defaults: dict[str, Any] = {name: param.value for name, param in form_params(form).items()}
    defaults.update(cluster="c1", action=draw(st.sampled_from(form.actions)))
    return form.dag_id, params_of(draw, defaults, plan_ids)


def usable(request: RemediationRequest) -> None:
    """Every value in range, the pattern compiles, the summary is JSON and UTF-8 (XCom, logs)."""
    assert all(topic_name_problem(t) is None for t in request.topics)
    assert all(0 <= b <= INT32_MAX for b in request.brokers)
    assert request.replication_factor is None or 1 <= request.replication_factor < 2**15
    assert 1 <= request.batch_size <= INT32_MAX
    assert request.throttle_bytes_per_s is None or MIN_THROTTLE <= request.throttle_bytes_per_s <= INT64_MAX
    assert request.topic_pattern is None or len(request.topic_pattern) <= MAX_PATTERN_LENGTH
    re.compile(request.topic_pattern or "")
    json.dumps(request.summary(), ensure_ascii=False).encode()


@FUZZ
@given(data=st.data())
def test_remediation_params_are_a_usable_request_or_a_param_error(
    stored: tuple[Settings, list[str]], data: st.DataObject
) -> None:
    settings, plan_ids = stored
    dag_id, params = data.draw(remediation_params(plan_ids))
    try:
        request = parse_request(params, settings, FORMS[dag_id], stored=stored_plan)
    except ParamError as e:
        assert str(e).startswith(f"Param {e.field!r}: ")
    else:
        usable(request)


@FUZZ
@given(data=st.data())
def test_cancel_params_are_a_usable_request_or_a_param_error(
    stored: tuple[Settings, list[str]], data: st.DataObject
) -> None:
    settings, plan_ids = stored
    defaults = {"cluster": "c1", "plan_id": plan_ids[0], "dry_run": True, "wait_seconds": 120}
    params = params_of(data.draw, defaults, plan_ids)
    try:
        request = remediation_cancel.parse_request(params, settings)
    except ParamError as e:
        assert str(e).startswith(f"Param {e.field!r}: ")
    else:
        assert request.plan_id in plan_ids and 0 <= request.wait_seconds <= remediation_cancel.MAX_WAIT_S


def test_a_cancel_param_name_of_another_type_is_refused(stored: tuple[Settings, list[str]]) -> None:
    """Regression (fuzzing): sorting unknown names of mixed types raised TypeError."""
    settings, plan_ids = stored
    with pytest.raises(ParamError, match=r"^Param '0': is not a Param of this DAG"):
        remediation_cancel.parse_request({"plan_id": plan_ids[0], 0: 1, "x": 2}, settings)  # type: ignore[dict-item]


def test_a_pattern_with_a_lone_surrogate_is_refused(stored: tuple[Settings, list[str]]) -> None:
    """Regression (fuzzing): it compiled, and then could not be written to XCom or a log as UTF-8."""
    settings, _ = stored
    form = FORMS["kafka_preferred_leader_election"]
    params = {**{n: p.value for n, p in form_params(form).items()}, "cluster": "c1", "topic_pattern": "t\ud800"}
    with pytest.raises(ParamError, match=r"^Param 'topic_pattern': 't\\ud800' is not valid Unicode"):
        parse_request(params, settings, form, stored=stored_plan)
