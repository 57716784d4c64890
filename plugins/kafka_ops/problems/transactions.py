"""Open transactions that hold read_committed consumers at a last stable offset below the high
watermark (`transactions`); the detector writes each row's `problem` and `action` (the abort command).

Gates and report: `no_hanging_transactions` (critical rows), `no_long_open_transactions` (warning rows),
one problem each (the gate frame's check columns use `FAILS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, gate_problems, since
from kafka_ops.problems.words import more, plural

HANGING = "no_hanging_transactions"
LONG_OPEN = "no_long_open_transactions"
FAILS: dict[str, Callable[[Row], bool]] = {
    HANGING: lambda r: r["severity"] == "critical",
    LONG_OPEN: lambda r: r["severity"] == "warning",
}
"""Which `transactions` rows fail each gate."""
_GATE_TITLES: dict[str, Callable[[int], str]] = {
    HANGING: lambda n: f"{plural(n, 'transaction')} hanging or open too long: read_committed consumers are stalled",
    LONG_OPEN: lambda n: f"{plural(n, 'transaction')} open for long: read_committed consumers wait behind them",
}


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of transaction gate `name`: hanging ones first, then the oldest."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(rows, key=lambda r: (not r["hanging"], -(r["age_seconds"] or 0), r["topic"], r["partition"]))
        return Problem(
            "critical" if name == HANGING else "warning",
            _GATE_TITLES[name](len(rows)),
            "; ".join(str(r["problem"]) for r in rows[:3]) + more(len(rows), 3, "transactions"),
            "; ".join(str(r["action"]) for r in rows[:3]),
            since((r.get("start_time") for r in rows), findings),
            "transactions",
            name,
            tuple(rows),
        )

    return compose


def problems(findings: FindingsRows) -> list[Problem]:
    """The transaction gates' problems, as the page says them, over the transactions each gate fails."""
    return gate_problems(findings.rows("transactions") or [], findings, FAILS, gate)
