from __future__ import annotations

import pytest

from kafka_ops.analysis.lag_estimates import group_method, time_behind


def seconds(value: float) -> str:
    return f"{value:,.0f} s"


@pytest.mark.parametrize(
    ("figure", "method", "text"),
    [
        (0.0, "caught_up", "0 s"),
        (44.6, "exact", "45 s (exact)"),  # the first unconsumed record's own timestamp
        (44.6, "interpolated", "~45 s (interpolated)"),
        (2025.0, "extrapolated", "~2,025 s (extrapolated)"),
        (30.0, "lower_bound", "≥ 30 s"),
        (45.0, None, "~45 s (estimated)"),  # findings written before the method was recorded
        (None, "too_few_points", "unknown"),
        (None, "no_commit", "unknown"),
    ],
)
def test_an_estimate_reads_as_an_estimate(figure: float | None, method: str | None, text: str) -> None:
    assert time_behind(figure, method, seconds) == text


def test_group_method_of_rows_from_before_the_column() -> None:
    assert group_method({"max_lag_method": "extrapolated", "max_is_lower_bound": False}) == "extrapolated"
    assert group_method({"max_is_lower_bound": True}) == "lower_bound"
    assert group_method({"max_is_lower_bound": False}) is None
    assert group_method({"max_lag_method": None, "max_is_lower_bound": None}) is None
