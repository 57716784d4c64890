"""The catalogue: stable, unique names; every check becomes one Great Expectations expectation."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_ops.validation import suites as s

PARAMETERS = {"max_collection_issues": 0, "max_group_collection_issues": 2, "leader_imbalance_percent": 10.0,
              "controller_elections_per_hour": 2.0}  # fmt: skip


def test_names_are_unique_and_every_check_means_something() -> None:
    names = [c.name for spec in s.SUITES.values() for c in spec.checks]
    assert len(names) == len(set(names)) == len(s.CHECKS) == 35
    assert all(c.meaning and c.severity in {"critical", "warning"} for c in s.CHECKS.values())
    assert all(c.severity == "critical" for spec in s.INTEGRITY_SUITES for c in spec.checks)


@pytest.mark.parametrize("spec", list(s.SUITES.values()), ids=list(s.SUITES))
def test_each_suite_builds_with_its_names_severities_and_bounds(spec: s.SuiteSpec) -> None:
    suite = s.to_gx_suite(spec, PARAMETERS)
    assert suite.name == spec.name and suite.meta["suite_version"] == s.SUITE_VERSION
    built = {e.meta["name"]: e for e in suite.expectations if e.meta}
    assert list(built) == [c.name for c in spec.checks]
    for check in spec.checks:
        expectation = built[check.name]
        assert expectation.severity.value == check.severity
        assert expectation.description is not None and expectation.description.startswith(f"{check.name}: ")
        if check.kind == "at_most":
            assert expectation.max_value == s.bound_of(check, PARAMETERS)  # type: ignore[attr-defined]


def test_a_missing_threshold_is_named() -> None:
    with pytest.raises(KeyError, match="needs the parameter 'max_collection_issues'"):
        s.bound_of(s.COLLECTION_ISSUES_WITHIN_THRESHOLD, {})


def test_the_catalogue_imports_without_great_expectations_or_pandas() -> None:
    """DAG files may import it at parse time."""
    code = "import sys, kafka_ops.validation.suites; print(sorted({'great_expectations', 'pandas'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
