"""How `make test` keeps a group in one xdist worker (`tests/lanes.py`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests import lanes


def item(nodeid: str, group: str) -> pytest.Item:
    mark = pytest.mark.xdist_group(group).mark
    return cast(pytest.Item, SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: mark))


def test_node_ids_that_carry_their_group_pass_even_when_the_group_is_a_parametrized_node_id() -> None:
    toy = "tests/bench/test_benchmarks.py::test_benchmark_runs_at_toy_size[zk_snapshot]"
    lanes.check_grouped([item("tests/x.py::test_a@kraft", "kraft"), item(f"{toy}@{toy}", toy)])


def test_a_node_id_xdist_could_not_suffix_stops_the_run_naming_it() -> None:
    with pytest.raises(pytest.UsageError, match=r"tests/x\.py::test_b"):
        lanes.check_grouped([item("tests/x.py::test_a@kraft", "kraft"), item("tests/x.py::test_b", "kraft")])


def test_the_summary_names_each_workers_minutes_and_longest_groups() -> None:
    times = lanes.LaneTimes()
    for worker, nodeid, seconds in (("gw0", "a.py::t@kraft", 600.0), ("gw0", "b.py::t@b.py", 60.0),
                                    ("gw1", "c.py::t@zk", 120.0)):  # fmt: skip
        report: Any = SimpleNamespace(node=SimpleNamespace(gateway=SimpleNamespace(id=worker)), nodeid=nodeid,
                                      duration=seconds)  # fmt: skip
        times.add(report)
    assert times.lines(top=1) == [
        "gw0: 11.0 min in 2 groups; longest: kraft 10.0",
        "gw1: 2.0 min in 1 groups; longest: zk 2.0",
    ]
