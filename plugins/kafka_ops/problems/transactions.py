"""Open transactions that hold read_committed consumers at a last stable offset below the high
watermark (`transactions`); the detector writes each row's `problem` and `action` (the abort command).

Gates: `no_hanging_transactions` (critical rows), `no_long_open_transactions` (warning rows).
Report: one problem per transaction rated warning or critical.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
from kafka_ops.problems.words import SEVERITY_RANK, more, plural

HANGING = "no_hanging_transactions"
LONG_OPEN = "no_long_open_transactions"
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
    rows = [r for r in findings.rows("transactions") or [] if r["severity"] in ("warning", "critical")]
    rows.sort(key=lambda r: (SEVERITY_RANK[r["severity"]], r["topic"], r["partition"]))
    return [
        Problem(
            r["severity"],
            f"{'Hanging transaction' if r['hanging'] else 'Open transaction'} on {r['topic']}-{r['partition']}",
            str(r["problem"]),
            str(r["action"]),
            since([r.get("start_time")], findings),
            "transactions",
            HANGING if r["severity"] == "critical" else LONG_OPEN,
            (r,),
        )
        for r in rows
    ]
