"""The planner registry: every action an operator can pick has its planner, and `plan_for` uses it."""

from __future__ import annotations

import pytest

from kafka_ops.planning.registry import PLANNERS, PlanInputs, plan_for
from kafka_ops.planning.request import ACTIONS, FORMS, RemediationRequest
from kafka_ops.settings import ClusterConfig
from tests.unit.planning.builders import cluster


def test_every_action_of_the_forms_has_a_planner() -> None:
    assert set(PLANNERS) == set(ACTIONS) == {a for form in FORMS.values() for a in form.actions}


def test_plan_for_runs_the_registered_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = cluster({1: "a", 2: "b"}, {"t": {0: (2, 1)}}, leaders={("t", 0): 1})
    request = RemediationRequest(ClusterConfig("c1"), "/lake", "preferred_election", True, None)
    assert [(e.topic, e.partition) for e in plan_for(request, snap).elections] == [("t", 0)]

    seen: list[PlanInputs] = []
    real = PLANNERS["preferred_election"]
    monkeypatch.setitem(PLANNERS, "preferred_election", lambda r, given: seen.append(given) or real(r, given))
    plan_for(request, snap)
    assert [(g.snapshot, g.topics, g.source) for g in seen] == [(snap, None, None)]
